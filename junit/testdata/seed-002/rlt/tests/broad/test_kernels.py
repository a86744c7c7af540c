import importlib.util
import pytest

HAS_CUDA = importlib.util.find_spec("torch") is not None and __import__("torch").cuda.is_available()


@pytest.mark.parametrize("head_dim", range(266))
def test_paged_attention_reference(head_dim):
    assert head_dim * 2 >= head_dim


@pytest.mark.skipif(not HAS_CUDA, reason="CUDA is not available")
@pytest.mark.parametrize("head_dim", [64, 80, 96, 112, 128, 192, 256, 512, 576, 1024])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_paged_attention_cuda(head_dim, dtype):
    pass


@pytest.mark.parametrize("backend", ["flashinfer-%d" % i for i in range(9)])
def test_flashinfer_backend(backend):
    pytest.skip("needs the FlashInfer backend")


@pytest.mark.parametrize("case", range(6))
def test_fp8_kv_cache(case):
    pytest.skip("FP8 KV cache is not supported on CPU")
