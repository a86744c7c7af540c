# A stand-in for kvcached's compiled extension that fails to load, as the
# real one does on a machine without the CUDA driver library.
raise ImportError("libcuda.so.1: cannot open shared object file: No such file or directory")
