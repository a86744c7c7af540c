package engine

import (
	"strings"
	"testing"
)

// familyLine is a real line of a failure family, copied from a public
// issue of the project its URL names.
type familyLine struct {
	url, line string
}

// Families are the families of kinds of failure (issue 29 item 5), each
// with real lines from at least three different projects, so that a
// family is tested on wordings it was not written around alone.
var Families = map[string][]familyLine{
	"network or name resolution failed": {
		{"https://github.com/huggingface/huggingface_hub/issues/1689", "socket.gaierror: [Errno -3] Temporary failure in name resolution"},
		{"https://github.com/medialab/minet/issues/636", "urllib3.exceptions.NewConnectionError: <urllib3.connection.HTTPSConnection object at 0x7f83a84a45d0>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution"},
		{"https://github.com/mohamadkhalaj/tradingView-API/issues/3", "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in certificate chain (_ssl.c:997)"},
		{"https://github.com/s3tools/s3cmd/issues/1253", "ERROR: Test failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in certificate chain (_ssl.c:1091)"},
		{"https://github.com/Jittor/JDet/issues/11", "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate (_ssl.c:1091)"},
		{"https://github.com/docker-archive-public/docker.kitematic/issues/3427", `(HTTP code 500) server error - {"message":"Get https://registry-1.docker.io/v2/: dial tcp: lookup registry-1.docker.io on [::1]:53: read udp [::1]:50843->[::1]:53: read: connection refused"}`},
		{"https://github.com/jpetazzo/dind/issues/10", "2014/02/06 06:34:37 pull: Get https://index.docker.io/v1/repositories/ubuntu/images: x509: certificate signed by unknown authority"},
		{"https://github.com/docker/for-win/issues/23", "docker: Error while pulling image: Get https://index.docker.io/v1/repositories/library/hello-world/images: x509: certificate signed by unknown authority."},
		{"https://github.com/bestswifter/macbootstrap/issues/38", "curl: (6) Could not resolve host: raw.githubusercontent.com"},
		{"https://github.com/moparisthebest/static-curl/issues/10", "curl: (6) Could not resolve host: www.baidu.com"},
		{"https://github.com/conbench/conbench/issues/815", "#10 18.23 pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out."},
		{"https://github.com/HuangCongQing/Python/issues/6", "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out."},
		{"https://github.com/OpenHands/OpenHands/issues/1277", "37.65   HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out."},
		{"https://github.com/microsoft/graphrag/issues/802", "urllib3.exceptions.ConnectTimeoutError: (<urllib3.connection.HTTPSConnection object at 0x0000022E9B501750>, 'Connection to openaipublic.blob.core.windows.net timed out. (connect timeout=None)')"},
		{"https://github.com/QwenLM/Qwen-Agent/issues/47", "urllib3.exceptions.ConnectTimeoutError: (<urllib3.connection.HTTPSConnection object at 0x7f04a87fa350>, 'Connection to openaipublic.blob.core.windows.net timed out. (connect timeout=None)')"},
		{"https://github.com/xtekky/chatgpt-clone/issues/35", `{"_action":"_ask","error":"an error occurred HTTPSConnectionPool(host='ddg-api.herokuapp.com', port=443): Max retries exceeded with url: /search?query=hi&limit=3 (Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x0000027A0A0FD210>, 'Connection to ddg-api.herokuapp.com timed out. (connect timeout=None)'))","success":false}`},
	},
	"model download failed": {
		{"https://github.com/unslothai/unsloth/issues/2136", `requests.exceptions.ReadTimeout: (ReadTimeoutError("HTTPSConnectionPool(host='cas-bridge.xethub.hf.co', port=443): Read timed out. (read timeout=10)"), '(Request ID: cbfc0695-9330-4b15-a600-2cc8e01e9ab7)')`},
		{"https://github.com/h2oai/h2ogpt/issues/533", "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='cdn-lfs.huggingface.co', port=443): Read timed out."},
		{"https://github.com/huggingface/huggingface_hub/issues/1718", "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='cdn-lfs.huggingface.co', port=443): Read timed out."},
		{"https://github.com/opea-project/GenAIExamples/issues/2237", "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json"},
		{"https://github.com/sgl-project/sglang/issues/14644", "OSError: You are trying to access a gated repo."},
	},
	"model not found": {
		{"https://github.com/boson-ai/higgs-audio/issues/123", "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-68a1df1f-3274fba05f177c4f00891218;d37ebc83-0dd4-4ea6-b71f-4d08e297cfa1)"},
		{"https://github.com/dome272/Wuerstchen/issues/11", "OSError: laion/CLIP-ViT-H-14-laion2B-s32B-b79K does not appear to have a file named config.json. Checkout 'https://huggingface.co/laion/CLIP-ViT-H-14-laion2B-s32B-b79K/main' for available files."},
		{"https://github.com/huggingface/transformers/issues/27954", "codellama/CodeLlama-7b-Instruct-hf does not appear to have a file named config.json"},
		{"https://github.com/jkwang28/OSDFace/issues/14", "OSError: Error no file named config.json found in directory stabilityai/stable-diffusion-2-1-base."},
		{"https://github.com/TMElyralab/MuseV/issues/150", "OSError: Error no file named config.json found in directory /data/chw/MuseV-main/configs/model/../../checkpoints/motion/musev_referencenet."},
		{"https://github.com/gregcmartin/HunyuanVideo_MLX/issues/10", "OSError: Error no file named config.json found in directory ./ckpts/hunyuan-video-t2v-720p/vae."},
		{"https://github.com/ollama/ollama-python/issues/149", "ollama._types.ResponseError: model 'llama2' not found, try pulling it first"},
		{"https://github.com/otwld/ollama-helm/issues/61", `{"error":"model 'tinyllama' not found, try pulling it first"}`},
		{"https://github.com/Quansight/ragna/issues/582", `ragna.core.RagnaException: API call failed, request_method=POST, request_url=http://localhost:11434/api/chat, response_status_code=404, response_content={'error': 'model "mistral" not found, try pulling it first'}`},
	},
	"command line refused": {
		{"https://github.com/vllm-project/vllm/issues/8273", "vllm: error: unrecognized arguments: --config"},
		{"https://github.com/InternLM/lmdeploy/issues/3277", "lmdeploy: error: unrecognized arguments: --tool-call-parser"},
		{"https://github.com/facebookresearch/ParlAI/issues/4618", "Parse Error: unrecognized arguments: --search-server http://localhost:8083"},
		{"https://github.com/facebookresearch/ParlAI/issues/1922", "Parse Error: unrecognized arguments: -n 100"},
		{"https://github.com/ggml-org/llama.vim/issues/36", "error: invalid argument: -hf"},
		{"https://github.com/tscibilia/home-ops/pull/3804", "error: invalid argument: --mmap"},
		{"https://github.com/mozilla-ai/llamafile/issues/936", "error: invalid argument: --tools"},
		{"https://github.com/StartupHakk/OpenMonoAgent.ai/issues/23", "llama-server  | error: invalid argument: 0.0.0.0"},
		{"https://github.com/mozilla-ai/llamafile/issues/553", "error: unknown argument: --server"},
		{"https://github.com/ggml-org/llama.vscode/issues/37", "error: unknown argument: -hf"},
		{"https://github.com/meta-llama/llama/issues/308", "error: unknown argument: a"},
		{"https://github.com/go-acme/lego/issues/583", "2018/06/20 11:37:11 flag provided but not defined: -m"},
		{"https://github.com/spf13/cobra/issues/1701", "Error: unknown flag: --pkg-name"},
		{"https://github.com/spf13/cobra/issues/731", "Error: unknown flag: --minify"},
		{"https://github.com/OJ/gobuster/issues/191", "Error:unknown shorthand flag: 'u' in -u"},
		{"https://github.com/LlamaEdge/Example-LlamaEdge-RAG/issues/1", "error: unexpected argument '--qdrant-url' found"},
		{"https://github.com/huggingface/text-generation-inference/issues/1456", "error: unexpected argument '--tokenizer-config-path' found"},
		{"https://github.com/huggingface/text-generation-inference/issues/1451", "error: invalid value 'True' for '--disable-custom-kernels'"},
		{"https://github.com/samuelvanderwaal/metaboss/issues/75", "error: Found argument '--v2' which wasn't expected, or isn't valid in this context"},
		{"https://github.com/polaris64/syswall/issues/3", "error: Found argument 'ls -l' which wasn't expected, or isn't valid in this context"},
	},
	"image for another CPU architecture": {
		{"https://github.com/clue/docker-h5ai/issues/9", `standard_init_linux.go:178: exec user process caused "exec format error"`},
		{"https://github.com/TimothyYe/godns/issues/54", `standard_init_linux.go:211: exec user process caused "exec format error"`},
		{"https://github.com/monitoror/monitoror/issues/403", "standard_init_linux.go:228: exec user process caused: exec format error"},
		{"https://github.com/xorbitsai/inference/issues/4256", "exec /usr/local/bin/xinference-local: exec format error"},
		{"https://github.com/duckdb/duckdb/issues/7255", "-bash: ./duckdb: cannot execute binary file: Exec format error"},
		{"https://github.com/osa911/archimmich/issues/13", "bash: ./ArchImmich: cannot execute binary file: Exec format error"},
	},
	"collective transport error": {
		{"https://github.com/NVIDIA/nccl/issues/1405", "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f"},
		{"https://github.com/NVIDIA/nccl-tests/issues/252", "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)"},
		{"https://github.com/NVIDIA/nccl-tests/issues/185", "dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable"},
		{"https://github.com/deepseek-ai/DeepEP/issues/106", "NET/IB : Got completion from peer 172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249"},
	},
	"disk full": {
		{"https://github.com/tloen/alpaca-lora/issues/280", "OSError: [Errno 122] Disk quota exceeded"},
		{"https://github.com/GeoscienceAustralia/dea-notebooks/issues/755", "OSError: [Errno 122] Disk quota exceeded: '/home/586/tn9356/.local/share/jupyter/runtime/kernel-b6f86981-8cd2-493e-958b-8b4847dcde9a.json'"},
		{"https://github.com/KennthShang/HostG/issues/7", "OSError: [Errno 122] Disk quota exceeded: 'out/intermediate.ntw'"},
		{"https://github.com/lrstanley/Code/issues/5", `+Code | [08:00:30] IOError: [Errno 122] Disk quota exceeded (file "/root/code/modules/find.py", line 65, in save_db)`},
		{"https://github.com/moby/moby/issues/29508", "failed to register layer: ApplyLayer exit status 1 stdout:  stderr: mkdir /root/.npm/registry.npmjs.org/har-validator: no space left on device"},
		{"https://github.com/wekan/wekan/issues/3074", "ERROR: failed to register layer: Error processing tar file(exit status 1): write /usr/share/zoneinfo/Asia/Qyzylorda: no space left on device"},
		{"https://github.com/Kaggle/docker-python/issues/19", "failed to register layer: ApplyLayer exit status 1 stdout:  stderr: write /usr/local/src/opencv/build/modules/video/perf_precomp.hpp.gch/opencv_perf_video_RELEASE.gch: no space left on device"},
	},
	"GPU driver not initialised": {
		{"https://github.com/NVIDIA/nvidia-docker/issues/988", "> NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure"},
		{"https://github.com/ci-for-research/self-hosted-runners/issues/40", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."},
		{"https://github.com/ameli/manylinux-cuda/issues/5", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."},
		{"https://github.com/mattshma/bigdata/issues/133", "[188497.595099] NVRM: No NVIDIA graphics adapter probed!"},
		{"https://github.com/NVIDIA/nvidia-container-toolkit/issues/816", "Failed to initialize NVML: Unknown Error"},
		{"https://github.com/princeton-nlp/SimCSE/issues/244", "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"},
		{"https://github.com/googlecolab/colabtools/issues/5136", "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"},
		{"https://github.com/gpustack/gpustack/issues/1254", "ERROR 02-20 16:43:12 engine.py:389] Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized"},
		{"https://github.com/haotian-liu/LLaVA/issues/683", "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system not yet initialized"},
		{"https://github.com/apecloud/ApeRAG/issues/120", "/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py:107: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 805: MPS client failed to connect to the MPS control daemon or the MPS server (Triggered internally at /opt/conda/conda-bld/pytorch_1682343967769/work/c10/cuda/CUDAFunctions.cpp:109.)"},
		{"https://github.com/NVIDIA/gpu-operator/issues/1146", "Dec  2 11:49:53 worker4 kernel: [  885.242168] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)"},
		{"https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789", "[  903.610907] NVRM: GPU 0000:98:00.0: RmInitAdapter failed! (0x62:0x65:1792)"},
		{"https://github.com/NVIDIA/cuda-samples/issues/104", "Feb 09 15:47:06 debian kernel: NVRM: GPU 0000:13:00.0: RmInitAdapter failed! (0x26:0x56:1463)"},
		{"https://github.com/Witko/nvidia-xrun/issues/135", "modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.2.13-200.fc30.x86_64"},
		{"https://github.com/compiler-explorer/infra/issues/1413", "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-1015-aws"},
		{"https://github.com/nix-community/nixos-facter-modules/issues/72", "modprobe: FATAL: Module nvidia not found in directory /nix/store/c0nvsd04r285dcyd0pvi7kpp0ybqxy8j-linux-6.12.17-modules/lib/modules/6.12.17"},
		{"https://github.com/Witko/nvidia-xrun/issues/148", "modprobe: ERROR: could not insert 'nvidia': Operation not permitted"},
	},
	"container command not found": {
		{"https://github.com/opencontainers/runc/issues/1490", `container_linux.go:259: starting container process caused "exec: \"sleep\": executable file not found in $PATH"`},
		{"https://github.com/containerd/containerd/issues/3597", `FATA[0000] execing command in container failed: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "aebb309d4fd260b8973d5873f040c81dcf71dc08e6cf7823aa60b01264833e07": OCI runtime exec failed: exec failed: container_linux.go:345: starting container process caused "exec: \"sh\": executable file not found in $PATH": unknown`},
		{"https://github.com/calcom/docker/issues/7", `OCI runtime exec failed: exec failed: container_linux.go:380: starting container process caused: exec: "--": executable file not found in $PATH: unknown`},
	},
	"engine arguments refused": {
		{"https://github.com/vllm-project/vllm/issues/3676", "ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len (None=8192 in model's config.json). This may lead to incorrect model"},
		{"https://github.com/xorbitsai/inference/issues/1715", "ValueError: [address=127.0.0.1:37657, pid=3125985] User-specified max_model_len (4096) is greater than the derived max_model_len (seq_length=2048 or model_max_length=None in model's config.json). This"},
		{"https://github.com/substratusai/vllm-docker/issues/37", "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half."},
		{"https://github.com/vllm-project/vllm/issues/1157", "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5."},
		{"https://github.com/THU-KEG/AdaptThink/issues/1", "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8)"},
		{"https://github.com/MIV-XJTU/FSDrive/issues/21", "ValueError: Total number of attention heads (12) must be divisible by tensor parallel size (8)."},
		{"https://github.com/vllm-project/vllm/issues/52435", "Value error, Total number of attention heads (64) must be divisible by tensor parallel size (3)."},
		{"https://github.com/vllm-project/vllm/issues/4202", "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70."},
		{"https://github.com/vllm-project/vllm/issues/14154", "ValueError: The quantization method bitsandbytes is not supported for the current GPU. Minimum capability: 70. Current capability: 52."},
		{"https://github.com/1CatAI/1Cat-vLLM/issues/94", "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 75. ', 'Current capability: 70.')"},
		{"https://github.com/vllm-project/vllm/issues/1769", "Unknown quantization method: gptq. Must be one of ['awq', 'squeezellm']"},
		{"https://github.com/vllm-project/vllm-omni/issues/2170", "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig"},
		{"https://github.com/zai-org/GLM-4/issues/573", "TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument 'engine_use_ray'"},
		{"https://github.com/bytedance/UI-TARS/issues/153", ": ArgumentValidation(\"`max_input_tokens`(65537) must be < `max_total_tokens`(65536)\")"},
		{"https://github.com/vllm-project/vllm/issues/28981", "(APIServer pid=63635) pydantic_core._pydantic_core.ValidationError: 1 validation error for SchedulerConfig"},
		{"https://github.com/ekinakyurek/marc/issues/8", "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'lora_target_modules'"},
		{"https://github.com/vllm-project/vllm/issues/9398", "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'num_scheduler_steps'"},
		{"https://github.com/vllm-project/vllm/issues/1941", "ValueError: torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"},
		{"https://github.com/vllm-project/tpu-inference/pull/1659", "Value error, torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"},
	},
	"model not supported by the image": {
		{"https://github.com/tenstorrent/tt-inference-server/issues/494", "ValueError: Model architectures ['TTLlamaForCausalLM'] are not supported for now. Supported architectures: ['AquilaModel', 'AquilaForCausalLM', 'ArcticForCausalLM'"},
		{"https://github.com/vllm-project/vllm/issues/13579", "ValueError: The checkpoint you are trying to load has model type `qwen2_5_vl` but Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or be"},
		{"https://github.com/declare-lab/Emma-X/issues/1", "ValueError: The checkpoint you are trying to load has model type `openvla` but Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date."},
		{"https://github.com/xorbitsai/inference/issues/3000", "ValueError: [address=0.0.0.0:51929, pid=36115] Loading /Users/guxing/.xinference/cache/bge-reranker-v2-minicpm-layerwise requires you to execute the configuration file in that repo on your local machine. Make sure you have read the code there to avoid malicious use, then set the option `trust_remote_code=True` to remove this error."},
		{"https://github.com/lm-sys/FastChat/issues/2471", "2023-09-26 09:36:30 | ERROR | stderr | ValueError: Loading /home/tskj/MOD/Qwen/Qwen-7B-Chat requires you to execute the configuration file in that repo on your local machine. M"},
		{"https://github.com/vllm-project/vllm/issues/6215", "ValueError: Loading microsoft/Phi-3-small-8k-instruct requires you to execute the configuration file in that repo on your local machine. Make sure you have read the code th"},
		{"https://github.com/chatchat-space/Langchain-Chatchat/issues/1376", "ValueError: Loading this model requires you to execute execute some code in that repo on your local machine. Make sure you have read the code at https://hf.co//home/sun/data/weishihao/LangChain/model to avoid malicious use, then set the option `trust_remote_code=True` to remove this error."},
		{"https://github.com/oobabooga/textgen/issues/5730", `ValueError: Loading models\TheBloke_Yi-6B-GPTQ requires you to execute the configuration file in that repo on your local machine. Make sure you have read the code there to avoid malicious use, then set the option trust_remote_code=True to remove this error`},
		{"https://github.com/runpod-workers/worker-vllm/issues/43", "2024-02-08T08:40:56.161703147Z The repository for TheBloke/Nous-Capybara-34B-AWQ contains custom code which must be executed to correctly load the model. You can inspect the repository content at https://hf.co/TheBloke/Nous-Capybara-34B-AWQ."},
	},
	"image pull or container failed": {
		{"https://github.com/gitpod-io/gitpod/issues/10607", "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to create new parent process: namespace path: lstat /proc/0/ns/ipc: no such file or directory: unknown"},
		{"https://github.com/containerd/containerd/issues/7388", "RunContainerError: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to create new parent process"},
		{"https://github.com/yaphetsglhf/issues/issues/64", "Error: failed to create containerd task: OCI runtime create failed"},
		{"https://github.com/podman-container-tools/podman/issues/16094", "Error: OCI runtime error: error executing hook `/usr/bin/nvidia-container-runtime-hook` (exit code: 1)"},
		{"https://github.com/ublue-os/bluefin/issues/3454", "Error: OCI runtime error: crun: {\"msg\":\"error executing hook `/usr/bin/nvidia-cdi-hook` (exit code: 1)\",\"level\":\"error\",\"time\":\"2025-10-22T10:04:55.559600Z\"}"},
	},
}

// TestFamiliesAcrossProjects: each family of kinds of failure catches real
// lines from at least three different projects, each line decided by that
// family (no family before it takes it), and huggingface_hub's retry
// warnings are not a network failure (a retry that then succeeds is none).
func TestFamiliesAcrossProjects(t *testing.T) {
	for name, lines := range Families {
		found := false
		for _, s := range Signatures {
			found = found || s.Name == name
		}
		if !found {
			t.Errorf("family %q is not in Signatures", name)
			continue
		}
		projects := map[string]bool{}
		for _, l := range lines {
			repo, ok := strings.CutPrefix(l.url, "https://github.com/")
			parts := strings.Split(repo, "/")
			if !ok || len(parts) != 4 || parts[2] != "issues" && parts[2] != "pull" {
				t.Errorf("%s: %q is not an issue URL", name, l.url)
				continue
			}
			projects[parts[0]+"/"+parts[1]] = true
			m, ok, err := FindSignature(strings.NewReader(l.line + "\n"))
			if err != nil || !ok || m.Name != name {
				t.Errorf("%s (%s): %q classed by %q (found %v)", name, l.url, l.line, m.Name, ok)
			}
		}
		if len(projects) < 3 {
			t.Errorf("family %q has lines from %d projects, want at least 3", name, len(projects))
		}
	}
	// gpustack/gpustack#3343: a retry warning of huggingface_hub.
	retry := `server-1    | 2025-11-18 10:26:53.662346+08:00 - huggingface_hub.utils._http - WARNING - '(MaxRetryError('HTTPSConnectionPool(host=\'huggingface.co\', port=443): Max retries exceeded with url: /Qwen/Qwen3-0.6B/resolve/main/config.json (Caused by NameResolutionError("<urllib3.connection.HTTPSConnection object at 0x72e2e7ca0f10>: Failed to resolve \'huggingface.co\' ([Errno -3] Temporary failure in name resolution)"))'), '(Request ID: 2e3fb3cb-79a7-40a2-b518-4b11e967a69a)')' thrown while requesting HEAD https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/config.json`
	if m, ok, _ := FindSignature(strings.NewReader(retry + "\n")); ok {
		t.Errorf("a retry warning classed by %q", m.Name)
	}
	// Not the network's: urllib3's and pip's retry warnings
	// (v3ucn/llama_index_examples_python3.10#1, packit/ogr#545), a
	// timeout from a loopback host over HTTPS (stevezau/media_preview_generator#22:
	// the server under test hanging would read the same), a plain-HTTP one
	// and CUDA's invalid-argument error (not llama.cpp's refusal), a warning
	// that quotes an HTTPS timeout (one request's image fetch), a loopback
	// connect timeout over IPv6, and a program that failed to start a helper
	// of its own (Python's and Go's ENOEXEC: the serving software's
	// packaging, not an image for another CPU): these made up here in the
	// shape requests, PyTorch, urllib3, CPython and Go print them.
	for _, line := range []string{
		"WARNING:urllib3.connectionpool:Retrying (Retry(total=1, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x000001C558043CA0>, 'Connection to api.openai.com timed out. (connect timeout=600)')': /v1/engines/text-embedding-ada-002/embeddings",
		`2021-02-23 18:55:03.232427 | test-node | E    WARNING: Retrying (Retry(total=1, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError("HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out. (read timeout=15)")': /packages/7e/83/284c6d3fac2e74532a9f51f908018690709db9af1469cf728574f6be3abf/setuptools_scm_git_archive-1.1-py2.py3-none-any.whl`,
		"requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='127.0.0.1', port=32400): Read timed out. (read timeout=30)",
		"requests.exceptions.ReadTimeout: HTTPConnectionPool(host='localhost', port=8000): Read timed out. (read timeout=600)",
		"RuntimeError: CUDA error: invalid argument",
		"WARNING could not fetch image: HTTPSConnectionPool(host='stats.example.com', port=443): Read timed out. (read timeout=10)",
		"urllib3.exceptions.ConnectTimeoutError: (<urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection to ::1 timed out. (connect timeout=5)')",
		"OSError: [Errno 8] Exec format error: '/usr/local/lib/python3.12/site-packages/kvcached/bin/kvd'",
		"start server a: fork/exec /opt/entry.sh: exec format error",
	} {
		if m, ok, _ := FindSignature(strings.NewReader(line + "\n")); ok {
			t.Errorf("%q classed by %q", line, m.Name)
		}
	}
}
