package engine

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
)

// Signature is a family of log lines that says whose fault a failure is
// (docs/runner.md §5.10).
type Signature struct {
	Name   string // the reason a report shows
	Class  string // one of collect's; of a Memory signature, the class when nothing is known
	Re     *regexp.Regexp
	Unless *regexp.Regexp // a line it matches is not of the family (a warning the tool retries)
	Memory bool           // a memory refusal: whose it is depends on what else held the GPU (runner's judgement)
	What   string         // what it catches, in a few words (the docs' table)
	Source string         // where the lines come from
}

// Signatures is the one table of failure signatures, keyed by family and
// shared by every engine, in precedence order (docs/runner.md §5.10: the
// machine's first, then memory refusals, the job's environment, the harness's
// mistakes, and last the product's positive evidence). Each entry has real
// lines in TestSignatures and in runner/testdata/corpus (TestCorpus).
var Signatures = []Signature{
	{
		Name: "GPU lost", Class: collect.ClassInfra, What: "a GPU gone from the bus, in every wording",
		// The kernel's `NVRM: Xid (PCI:...): 79, ... GPU has fallen off the
		// bus.` (NVIDIA's Xid catalog, docs.nvidia.com/deploy/xid-errors);
		// newer drivers split it over lines (`NVRM: The NVIDIA GPU
		// 0000:b3:00.0` / ... / `NVRM: fallen off the bus and is not
		// responding to commands.`, NVIDIA/NVSentinel#155), older ones write
		// `NVRM: GPU at 0000:01:00.0 has fallen off the bus.`; NVML's
		// NVML_ERROR_GPU_IS_LOST text that nvidia-smi prints.
		// nvidia-smi's `Unable to determine the device handle for
		// GPU0000:4F:00.0: Unknown Error` when NVML no longer reaches a GPU
		// (haotian-liu/LLaVA#1466, rwth-i6/returnn#1486 after PCIe errors).
		Re:     regexp.MustCompile(`fallen off the bus|GPU is lost|Unable to determine the device handle for GPU`),
		Source: "kernel log Xid 79 and NVRM; NVML nvmlErrorString(NVML_ERROR_GPU_IS_LOST); nvidia-smi",
	},
	{
		Name: "ECC error", Class: collect.ClassInfra, What: "uncorrectable ECC errors, row remapping",
		Re: regexp.MustCompile(`uncorrectable ECC error encountered|NVRM: Xid \(PCI:[^)]*\): (48|63|64|92|94|95)\b`),
		// CUDA's cudaGetErrorString(cudaErrorECCUncorrectable), which
		// PyTorch prints as `CUDA error: uncorrectable ECC error
		// encountered`; Xid 48 (double-bit ECC), 63/64 (row remapping),
		// 92 (high single-bit rate), 94/95 (contained/uncontained ECC).
		Source: "CUDA runtime cudaErrorECCUncorrectable; NVIDIA Xid catalog",
	},
	{
		Name: "GPU Xid error", Class: collect.ClassInfra, What: "the driver's, firmware's or hardware's Xids; GSP RPC timeouts",
		// The kernel's line, e.g. `NVRM: Xid (PCI:0000:01:00): 62, 323f0f30
		// ...` (forums.developer.nvidia.com/t/.../371272). The Xids listed
		// are the driver's, firmware's or hardware's (61/62 micro-controller,
		// 74 and 149 NVLink, 79 off the bus, 119/120 GSP, 154 reset
		// required); 13, 31, 43 and 45 are left out: an application's own
		// fault (an illegal address, a killed context) reports them too. A
		// GSP RPC timeout without its Xid line: the driver's dump of the RPC
		// history (`NVRM: GPU6 RPC event history (CPU <- GSP):`,
		// NVIDIA/open-gpu-kernel-modules#1230) and its `Timeout waiting for
		// RPC from GSP` (#446). An application's Xid 45 that names one of
		// these as its cause (`Xid (...): 45, ... caused by previous Xid
		// 149`, #1150) is the machine's too.
		Re:     regexp.MustCompile(`NVRM: Xid \(PCI:[^)]*\): (61|62|74|79|119|120|149|154)\b|caused by previous Xid (61|62|74|79|119|120|149|154)\b|NVRM: GPU\d+ RPC (?:event )?history|[Tt]imeout (?:after \d+s of )?waiting for RPC (?:response )?from (?:GPU\d+ )?GSP`),
		Source: "Linux kernel log, NVIDIA driver (NVRM) Xid and GSP lines",
	},
	{
		Name: "a process was OOM-killed", Class: collect.ClassInfra, What: "the kernel's OOM killer",
		// mm/oom_kill.c __oom_kill_process: pr_err("%s: Killed process %d
		// (%s) total-vm:...", message, ...), message "Out of memory" or
		// "Memory cgroup out of memory".
		Re:     regexp.MustCompile(`(?:Out of memory|Memory cgroup out of memory): Killed process \d+`),
		Source: "Linux mm/oom_kill.c __oom_kill_process",
	},
	{
		Name: "disk full", Class: collect.ClassInfra, What: "a full disk or an exhausted disk quota",
		// strerror(ENOSPC), as Python prints it: `OSError: [Errno 28] No
		// space left on device`; strerror(EDQUOT), `OSError: [Errno 122]
		// Disk quota exceeded` (tloen/alpaca-lora#280,
		// GeoscienceAustralia/dea-notebooks#755, KennthShang/HostG#7); Go's
		// lower-case ENOSPC text, as Docker writes a layer (moby/moby#29508).
		Re:     regexp.MustCompile(`[Nn]o space left on device|Disk quota exceeded|\[Errno (?:28|122)\]`),
		Source: "strerror(ENOSPC), strerror(EDQUOT)",
	},
	{
		Name: "driver and CUDA mismatch", Class: collect.ClassInfra, What: "a driver too old for the image's CUDA, or user space and kernel module apart",
		// PyTorch's `The NVIDIA driver on your system is too old (found
		// version 11040)` (lllyasviel/Fooocus#1313); CUDA's
		// cudaErrorInsufficientDriver text `CUDA driver version is
		// insufficient for CUDA runtime version` (mlcommons/inference#54)
		// and cudaErrorCompatNotSupportedOnDevice `forward compatibility was
		// attempted on non supported HW` (vllm-project/vllm#4940); NVML's
		// `Driver/library version mismatch` (nvidia-smi, the container
		// hook's `nvml error: driver/library version mismatch`); the
		// kernel's `NVRM: API mismatch: the client has the version ...`
		// (NVIDIA/nvidia-docker#182); the container hook's `requirement
		// error: unsatisfied condition: cuda>=...`.
		Re:     regexp.MustCompile(`NVIDIA driver on your system is too old|CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver|forward compatibility was attempted on non supported HW|[Dd]river/library version mismatch|NVRM: API mismatch|unsatisfied condition: cuda>=`),
		Source: "PyTorch torch.cuda driver check; CUDA runtime error strings; NVML; NVRM",
	},
	{
		Name: "GPU busy or unavailable", Class: collect.ClassInfra, What: "a GPU that refuses a new context",
		// CUDA's cudaErrorDevicesUnavailable text: `CUDA-capable device(s)
		// is/are busy or unavailable` (Tencent-Hunyuan/InstantCharacter#21,
		// ggml-org/llama.cpp#11841), older runtimes `all CUDA-capable
		// devices are busy or unavailable` (ZhengZerong/PaMIR#17).
		Re:     regexp.MustCompile(`CUDA-capable device\(s\) is/are busy or unavailable|all CUDA-capable devices are busy or unavailable|cudaErrorDevicesUnavailable`),
		Source: "CUDA runtime cudaErrorDevicesUnavailable",
	},
	{
		Name: "no GPU visible", Class: collect.ClassInfra, What: "no device visible to the process",
		// PyTorch's check when no device is visible (`RuntimeError: No
		// CUDA GPUs are available`), and CUDA's cudaErrorNoDevice text.
		Re:     regexp.MustCompile(`No CUDA GPUs are available|no CUDA-capable device is detected|CUDA driver initialization failed`),
		Source: "PyTorch torch.cuda lazy init; CUDA runtime cudaErrorNoDevice",
	},
	{
		Name: "GPU driver not initialised", Class: collect.ClassInfra, What: "NVML or the NVIDIA driver that never came up",
		// NVML's nvmlInit failure as nvidia-smi prints it, `Failed to
		// initialize NVML: Unknown Error` (NVIDIA/nvidia-container-toolkit#816,
		// NVIDIA/nvidia-docker#1671, utkuozdemir/nvidia_gpu_exporter#110);
		// nvidia-smi's `NVIDIA-SMI has failed because it couldn't
		// communicate with the NVIDIA driver` (NVIDIA/nvidia-docker#988,
		// ci-for-research/self-hosted-runners#40, AlexeyAB/darknet#3310);
		// the kernel module's `NVRM: No NVIDIA graphics adapter probed!`
		// (mattshma/bigdata#133).
		// PyTorch's c10/cuda/CUDAFunctions.cpp when the driver is absent
		// (`Found no NVIDIA driver on your system`) or cudaGetDeviceCount
		// fails (`Unexpected error from cudaGetDeviceCount(). ... Error 802:
		// system not yet initialized`, gpustack/gpustack#1254; 805, an MPS
		// daemon unreachable): no program's fault sets the device count.
		// The kernel module's adapter start that failed (`NVRM: GPU
		// 0000:0a:00.0: RmInitAdapter failed!`, NVIDIA/gpu-operator#1146)
		// and kmod's `modprobe: FATAL: Module nvidia not found ...`, `could
		// not insert 'nvidia'` (compiler-explorer/infra#1413).
		Re:     regexp.MustCompile(`Failed to initialize NVML|NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver|NVRM: No NVIDIA graphics adapter probed|Found no NVIDIA driver on your system|Unexpected error from cudaGetDeviceCount\(\)|RmInitAdapter failed!|modprobe: (?:FATAL: Module nvidia\S* not found|ERROR: could not insert 'nvidia)`),
		Source: "NVML nvmlInit; nvidia-smi; PyTorch c10/cuda/CUDAFunctions.cpp; NVRM",
	},
	{
		Name: "collective transport error", Class: collect.ClassInfra, What: "NCCL's InfiniBand/RoCE transport failing, ahead of the CUDA errors it causes",
		// NCCL's IB transport reporting a failed work completion, `NCCL WARN
		// NET/IB : Got completion from peer ... with status=12 ... vendor
		// err 129` (NVIDIA/nccl#1405, NVIDIA/nccl-tests#252, the same in
		// torch's `Last error:` of deepseek-ai/DeepEP#106), and a verbs call
		// that failed, `NCCL WARN Call to ibv_modify_qp failed with error
		// Network is unreachable` (NVIDIA/nccl-tests#185). Before the memory
		// and CUDA families: a collective that lost its transport ends in
		// CUDA or watchdog errors that are its consequences. Not
		// `ncclRemoteError` alone: a peer rank that crashed reports it too.
		Re:     regexp.MustCompile(`NET/IBP? ?: ?Got completion from peer|NCCL WARN Call to ibv_\w+ failed`),
		Source: "NCCL transport/net_ib.cc, misc/ibvwrap.cc",
	},
	{
		Name: "memory refusal", Class: collect.ClassProduct, Memory: true,
		What: "an OOM or a KV-cache sizing refusal, judged by what else held the GPU",
		// PyTorch's allocator (`torch.OutOfMemoryError: CUDA out of memory.
		// Tried to allocate ...`, vllm-project/vllm#12529) and CUDA's
		// `CUDA error: out of memory`; kvcached's own check of cuMemCreate
		// (csrc/inc/gpu_vmm.hpp@e8e6406 check(): `<file>:<line> <call>
		// failed in CUDA driver (2): out of memory`, 2 being
		// CUDA_ERROR_OUT_OF_MEMORY); vLLM's KV-cache sizing
		// (vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory: `No
		// available memory for the cache blocks.`, vllm-project/vllm#27508;
		// `... KV cache is needed, which is larger than the available KV
		// cache memory`, older `... is larger than the maximum number of
		// tokens that can be stored in KV cache`, QwenLM/Qwen3#295: that
		// cache is kvcached's, so never the harness's by its words alone)
		// and its start-up check (vllm/v1/worker/gpu_worker.py init_device:
		// `Free memory on device (7.34/139.72 GiB) on startup is less than
		// desired GPU memory utilization ...`, #23192); SGLang's
		// (python/sglang/srt/model_executor/model_runner.py: `Not enough
		// memory. Please try to increase --mem-fraction-static.`,
		// sgl-project/sglang#4330).
		Re:     regexp.MustCompile(`CUDA out of memory|CUDA error: out of memory|CUDA_ERROR_OUT_OF_MEMORY|failed in CUDA (?:driver|runtime) \(2\): out of memory|No available memory for the cache blocks|is larger than the maximum number of tokens that can be stored in KV cache|KV cache is needed, which is larger than the available KV cache memory|Free memory on device .*is less than desired GPU memory utilization|Not enough memory\. Please try to increase --mem-fraction-static`),
		Source: "PyTorch CUDACachingAllocator; CUDA; kvcached gpu_vmm.hpp; vLLM gpu_worker.py, kv_cache_utils.py; SGLang model_runner.py",
	},
	{
		Name: "NCCL system error", Class: collect.ClassInfra, What: "NCCL's shared memory or system calls (container --ipc, /dev/shm size)",
		// NCCL's shm transport: `include/shm.h:27 NCCL WARN Call to
		// shm_open failed : Permission denied` (NVIDIA/nccl#328),
		// `misc/shmutils.cc:129 NCCL WARN Error while attaching to shared
		// memory segment /dev/shm/nccl-...` (#1589), `NCCL WARN Error:
		// failed to extend /dev/shm/nccl-... to N bytes`
		// (NVIDIA/nccl-tests#166); the error it returns, ncclSystemError,
		// as `unhandled system error`.
		Re:     regexp.MustCompile(`NCCL WARN Call to (?:shm_)?open failed|NCCL WARN Error while (?:creating|attaching to) shared memory segment|NCCL WARN Error: failed to extend /dev/shm|unhandled system error|ncclSystemError`),
		Source: "NCCL src/misc/shmutils.cc, include/shm.h; ncclGetErrorString(ncclSystemError)",
	},
	{
		Name: "port taken", Class: collect.ClassInfra, What: "a port another process holds",
		// CPython asyncio base_events.py create_server: OSError(err.errno,
		// 'error while attempting to bind on address %r: %s'), which
		// uvicorn logs as `[Errno 98] error while attempting to bind on
		// address ('127.0.0.1', 18001): address already in use`; torch's
		// TCPStore `code: -98, name: EADDRINUSE` (vllm-project/vllm#11617);
		// ZMQ's `zmq.error.ZMQError: Address already in use`; Go's `bind:
		// address already in use` and the runner's own `port N is already
		// in use by ...` (before the start) and `port N is held by pid P
		// (...), not by the server's process group` (while waiting).
		Re:     regexp.MustCompile(`\[Errno 98\]|errno: 98\b|EADDRINUSE|[Aa]ddress already in use|port \d+ is (?:already in use|held by )`),
		Source: "EADDRINUSE as CPython, torch TCPStore, ZMQ and Go print it; the runner's port checks",
	},
	{
		Name: "a foreign server on the port", Class: collect.ClassInfra, What: "another server answering on the server's port",
		// The runner's own readiness wait (Server.WaitReady, engine
		// Client.Identify): what answers on the port does not list the
		// served name this run gave the server in GET /v1/models, exec
		// prefix or not.
		Re:     regexp.MustCompile(`answers as another server \(`),
		Source: "ci-report's readiness wait (runner/engine Server.WaitReady)",
	},
	{
		Name: "model not found", Class: collect.ClassHarness, What: "a model id, revision or model file the Hub, the path or the server does not have: the plan's",
		// huggingface_hub errors.py RepositoryNotFoundError (`Repository Not
		// Found for url: ...`, boson-ai/higgs-audio#123) and
		// RevisionNotFoundError; transformers' `... is not a local folder
		// and is not a valid model identifier listed on
		// 'https://huggingface.co/models'`. Before the download family: the
		// Hub answers a missing repo with `401 Client Error` too. A model
		// that is there but lacks its config: transformers' cached_file
		// (src/transformers/utils/hub.py@d8cb2e01: `<id> does not appear to
		// have a file named config.json. Checkout ...`, an EntryNotFound
		// from the Hub or a local folder without it), diffusers'
		// ConfigMixin.load_config for a local folder
		// (src/diffusers/configuration_utils.py@72d9bd56: `Error no file
		// named config.json found in directory <dir>.`; only the model's
		// config.json: a pipeline's own scheduler_config.json is its code's
		// path, ixarchakos/try-off-anyone#5); Ollama's server for a model it
		// has not pulled (ollama/ollama server/routes.go@fb307609, since
		// #718: `model "x" not found, try pulling it first`, older `'x'`).
		// Each names a missing model or model file, never a Hub outage.
		Re:     regexp.MustCompile(`RepositoryNotFoundError|Repository Not Found for url|RevisionNotFoundError|Revision Not Found for url|is not a local folder and is not a valid model identifier|does not appear to have a file named config\.json|Error no file named config\.json found in directory|model ['"][^'"]*['"] not found, try pulling it first`),
		Source: "huggingface_hub errors.py; transformers utils/hub.py; diffusers configuration_utils.py; Ollama server/routes.go",
	},
	{
		Name: "model download failed", Class: collect.ClassInfra, What: "the Hub refused or timed out: gated repo, 401/403, 429, timeouts",
		// huggingface_hub file_download.py _raise_on_head_call_error:
		// LocalEntryNotFoundError("... cannot find the requested files in
		// the local cache ..."); errors.py GatedRepoError and
		// HfHubHTTPError, whose text is `401 Client Error. (Request ID:
		// ...)`; transformers' `OSError: You are trying to access a gated
		// repo.` (sgl-project/sglang#14644) and `We couldn't connect to
		// 'https://huggingface.co'`; requests' `401 Client Error:
		// Unauthorized for url: https://huggingface.co/...`
		// (opea-project/GenAIExamples#2237), `429 Client Error: Too Many
		// Requests for url` (retyped `for URL:` in
		// huggingface/transformers#34841), urllib3's `HTTPSConnectionPool(host=
		// 'huggingface.co', port=443): Read timed out` / `Max retries
		// exceeded` (cdn-lfs.huggingface.co alike, and the Hub's hf.co hosts:
		// its Xet storage `cas-bridge.xethub.hf.co`, unslothai/unsloth#2136).
		// Not a line of
		// http_backoff's retry warnings (utils/_http.py@HEAD: `'<err>'
		// thrown while requesting <method> <url>`, `Retrying in 1s [Retry
		// 1/5].`): a retry that then succeeds is no failure.
		Re:     regexp.MustCompile(`cannot find the requested files in the local cache|LocalEntryNotFoundError|GatedRepoError|HfHubHTTPError|You are trying to access a gated repo|Cannot access gated repo|We couldn't connect to 'https://huggingface\.co'|(?:401|403|429|5\d\d) (?:Client|Server) Error(?:\. \(Request ID:|: .*for (?:url|URL): https://(?:[\w-]+\.)*(?:huggingface|hf)\.co)|HTTPSConnectionPool\(host='(?:[\w-]+\.)*(?:huggingface|hf)\.co'`),
		Unless: regexp.MustCompile(`thrown while requesting|Retrying in \d`),
		Source: "huggingface_hub file_download.py, errors.py, utils/_http.py; transformers utils/hub.py; requests; urllib3",
	},
	{
		Name: "network or name resolution failed", Class: collect.ClassInfra, What: "DNS, TLS verification, an unreachable network, a remote host timing out over HTTPS",
		// getaddrinfo's EAI_AGAIN as Python prints it, `socket.gaierror:
		// [Errno -3] Temporary failure in name resolution`
		// (huggingface/huggingface_hub#1689, medialab/minet#636), EAI_NONAME
		// `Name or service not known` (yuh-zha/AlignScore#17), Windows'
		// `getaddrinfo failed`; OpenSSL's verification failure as Python's
		// ssl module words it, `[SSL: CERTIFICATE_VERIFY_FAILED] certificate
		// verify failed` (mohamadkhalaj/tradingView-API#3, s3tools/s3cmd#1253,
		// Jittor/JDet#11); strerror(ENETUNREACH) and strerror(EHOSTUNREACH)
		// with their errno (`[Errno 101] Network is unreachable`,
		// AUTOMATIC1111/stable-diffusion-webui#17165). After the Hub's
		// family, which names a refused download; never a line of
		// huggingface_hub's retry warnings, as there. Go's resolver and
		// certificate errors (`dial tcp: lookup <host> on <server>: ...`,
		// `x509: certificate signed by unknown authority`, as Docker prints
		// them: docker/for-win#23) and curl's `Could not resolve host`.
		// urllib3's timeouts to a remote host over HTTPS
		// (src/urllib3/connectionpool.py@266b347d: ReadTimeoutError
		// `HTTPSConnectionPool(host='files.pythonhosted.org', port=443):
		// Read timed out.`, conbench/conbench#815; connection.py's
		// ConnectTimeoutError `(<urllib3.connection.HTTPSConnection object
		// at 0x...>, 'Connection to <host> timed out. ...')`,
		// microsoft/graphrag#802): a package index, a registry, an API;
		// only in the exception's own line, an ERROR line or the line alone
		// (pip's, under a build's timestamp): a logged warning that quotes
		// one, an image fetch of one request, does not fail the case.
		// Never a refused or reset connection, nor a timeout from a plain
		// HTTP connection or a loopback host: the server under test dying
		// or hanging gives its client those. Never a retry warning
		// (huggingface_hub's, as there; urllib3's and pip's `Retrying
		// (Retry(total=...)) after connection broken by ...`,
		// packit/ogr#545): a retry that then succeeds is no failure.
		Re:     regexp.MustCompile(`Temporary failure in name resolution|Name or service not known|getaddrinfo failed|CERTIFICATE_VERIFY_FAILED|\[Errno 101\] Network is unreachable|\[Errno 113\] No route to host|dial tcp: lookup |x509: certificate |Could(?: not|n't) resolve (?:host|proxy)|(?:(?:ReadTimeout(?:Error)?|ConnectTimeout(?:Error)?|ConnectionError|MaxRetryError|ERROR)\W.*|^[\d.:#\s]*)HTTPSConnectionPool\(host='[^']*', port=\d+\): Read timed out|ConnectTimeoutError:? ?\(<(?:[\w.]+\.)?urllib3\.connection\.(?:Verified)?HTTPSConnection object`),
		Unless: regexp.MustCompile(`thrown while requesting|Retrying in \d|Retrying \(Retry\(|host='(?:localhost|127\.[\d.]+|0\.0\.0\.0|::1)'|Connection to (?:localhost|127\.[\d.]+|0\.0\.0\.0|::1) timed out`),
		Source: "getaddrinfo gai_strerror; OpenSSL via CPython ssl; strerror(ENETUNREACH, EHOSTUNREACH); Go net, crypto/x509; curl; urllib3 timeouts",
	},
	{
		Name: "image for another CPU architecture", Class: collect.ClassHarness, What: "an image or binary built for another CPU architecture than the machine's: the workflow chose what the machine cannot run",
		// The kernel's ENOEXEC for a binary of another architecture, as runc
		// words it starting the container's process: older runc
		// `standard_init_linux.go:178: exec user process caused "exec format
		// error"` (clue/docker-h5ai#9, TimothyYe/godns#54; later `caused:
		// exec format error`, monitoror/monitoror#403), newer runc's
		// os.PathError from system.Exec (libcontainer/standard_init_linux.go@
		// 02120488: `exec /usr/local/bin/xinference-local: exec format
		// error`, xorbitsai/inference#4256); Go's syscall.ENOEXEC text is the
		// lower-case `exec format error`, glibc's strerror(ENOEXEC) the
		// shell's `cannot execute binary file: Exec format error`
		// (duckdb/duckdb#7255). Only these forms, which start the image's or
		// the command's own program: Python's `OSError: [Errno 8] Exec
		// format error: '<path>'` and Go's `fork/exec <path>: exec format
		// error` come from a program starting a helper of its own (a
		// script without `#!`, a helper built for another CPU inside the
		// right image), the serving software's packaging. A harness family
		// ahead of the container families, which would take runc's line
		// inside `OCI runtime create failed` for the runtime's: the image is
		// the plan's choice.
		Re:     regexp.MustCompile(`exec user process caused:? "?exec format error|^exec /\S+: exec format error|cannot execute binary file: Exec format error`),
		Source: "runc libcontainer standard_init_linux.go; Go syscall ENOEXEC; glibc strerror(ENOEXEC)",
	},
	{
		Name: "container command not found", Class: collect.ClassInfra, What: "a container whose command does not exist in its image",
		// runc's start of a container process whose executable is not in
		// the image: `starting container process caused "exec: \"sleep\":
		// executable file not found in $PATH"` (opencontainers/runc#1490,
		// containerd/containerd#3597, calcom/docker#7), which Go's
		// exec.LookPath words the same (`exec: "vllm": executable file not
		// found in $PATH`) when the runner starts a command the machine lacks.
		Re:     regexp.MustCompile(`executable file not found in \$PATH`),
		Source: "runc libcontainer; Go os/exec LookPath",
	},
	{
		Name: "image pull or container failed", Class: collect.ClassInfra, What: "docker pull, docker exec, the NVIDIA container hook (Docker's, podman's, CRI-O's)",
		// The Docker client's fmt.Errorf("Error response from daemon: %s",
		// ...) (moby client), which `docker pull` (`pull access denied`,
		// `manifest unknown`, `toomanyrequests`) and a `docker exec` into a
		// container that is gone print through the exec prefix; the NVIDIA
		// container hook's `nvidia-container-cli: ... error` and Docker's
		// `could not select device driver "" with capabilities: [[gpu]]`;
		// the OCI runtime's failure to create or start one under containerd
		// or Kubernetes (`failed to create shim task: OCI runtime create
		// failed: ...`, gitpod-io/gitpod#10607). The NVIDIA hook failing
		// under podman or CRI-O, whose runtime crun words it
		// (src/libcrun/container.c@c0011b8d: `error executing hook `%s`
		// (exit code: %d)`): `/usr/bin/nvidia-container-runtime-hook`
		// (podman-container-tools/podman#16094) or the CDI hook
		// `/usr/bin/nvidia-cdi-hook` (ublue-os/bluefin#3454). After the
		// command family, whose runc lines say `OCI runtime exec failed` too.
		Re:     regexp.MustCompile("Error response from daemon: |toomanyrequests: You have reached your pull rate limit|nvidia-container-cli: [a-z]+ error|could not select device driver|OCI runtime (?:create|start) failed|failed to create shim task|error executing hook `[^`]*/nvidia-(?:container-runtime-hook|container-toolkit|cdi-hook)`"),
		Source: "moby/docker client request errors; NVIDIA libnvidia-container; containerd, runc; crun hooks",
	},
	{
		Name: "engine arguments refused", Class: collect.ClassHarness, What: "the engine's own validation of the arguments the plan gave it against the model and the GPU (vLLM's config classes, TGI's launcher)",
		// vLLM's config classes check the arguments against the model's
		// config and the GPU and raise ValueError; as pydantic dataclasses
		// (vllm/config/model.py@18ec6629) they report it as `ValidationError:
		// 1 validation error for ModelConfig` then `Value error, <message>`
		// (vllm-project/vllm-omni#2170, vllm-project/vllm#52435). The family
		// is that ValidationError of ModelConfig, ParallelConfig and the like
		// (not CacheConfig's, whose checks concern the KV cache kvcached
		// manages, nor VllmConfig's, which runs platform and plugin hooks),
		// and the messages older versions raise bare: max_model_len over the
		// model's (_get_and_verify_max_len); heads or layers the parallel
		// sizes do not divide (verify_with_parallel_config); a dtype or a
		// quantization the GPU lacks, compressed-tensors' RuntimeError
		// included; a quantization method or its dtype the engine does not
		// take (`Unknown quantization method: gptq`, same file); EngineArgs
		// given a keyword it lacks (vllm-project/vllm#9398). TGI's launcher
		// checks its arguments the same way before it starts a shard
		// (launcher/src/main.rs@db931fcf LauncherError::ArgumentValidation,
		// which main's Result prints as `Error: ArgumentValidation("`max_input_tokens`(65537)
		// must be < `max_total_tokens`(65536)")`, bytedance/UI-TARS#153).
		// Real lines of each in TestFamiliesAcrossProjects.
		Re:     regexp.MustCompile(`User-specified max_model_len \(\d+\) is greater than the derived max_model_len|Bfloat16 is only supported on GPUs with compute capability of at least 8\.0|Total number of (?:attention heads|hidden layers) \(\d+\) must be divisible by (?:tensor|pipeline) parallel size|The quantization method \S+ is not supported for the current GPU|Quantization scheme is not supported for|Unknown quantization method: |is not supported for quantization method \S+\. Supported dtypes|\d+ validation errors? for (?:Model|Parallel|Scheduler|Load|Device|Speculative|LoRA)Config\b|EngineArgs\.__init__\(\) got an unexpected keyword argument|\bArgumentValidation\("`),
		Source: "vLLM config classes' validation (vllm/config/*.py), EngineArgs; TGI launcher ArgumentValidation",
	},
	{
		Name: "model not supported by the image", Class: collect.ClassHarness, What: "a model whose architecture the image's engine or transformers does not know, or that needs trust_remote_code",
		// The engine's registry refusing an architecture it does not have
		// (`Model architectures ['X'] are not supported for now.`; vLLM says
		// `failed to be inspected` for one whose module failed to import,
		// left out; SGLang's registry skips such a module, `Ignore import
		// error when loading ...`, sgl-project/sglang#4253, and then reads
		// the same: the environment's fault, not kvcached's); transformers'
		// AutoConfig for a model_type it lacks (`... Transformers does not
		// recognize this architecture`, configuration_auto.py) and its
		// resolve_trust_remote_code for custom code the command did not
		// trust (dynamic_module_utils.py, three wordings over its versions).
		// The plan paired a model with an image or command line that cannot
		// serve it.
		Re:     regexp.MustCompile(`Model architectures \[[^\]]*\] are not supported for now|Transformers does not recognize this architecture|requires you to execute [^.]* in that repo on your local machine|set the option .?trust_remote_code=True.? to remove this error|contains custom code which must be executed to correctly load the model`),
		Source: "vLLM/SGLang model registry; transformers configuration_auto.py, dynamic_module_utils.py",
	},
	{
		Name: "command line refused", Class: collect.ClassHarness, What: "the engine's argument parser refused the command line the plan built",
		// argparse ArgumentParser.error: `vllm: error: unrecognized
		// arguments: --config` (vllm-project/vllm#8273), `error: argument
		// --dtype: invalid choice: ...`, `error: the following arguments
		// are required: ...`; its subclasses that reword the prefix, as
		// ParlAI's ParlaiParser.error (parlai/core/params.py@a29567f7:
		// `Parse Error: unrecognized arguments: ...`,
		// facebookresearch/ParlAI#4618). The other parsers an engine's
		// command line meets: llama.cpp's common_params_parse_ex
		// (common/arg.cpp@0017d6fb: `error: invalid argument: -hf`,
		// ggml-org/llama.vim#36), its older gpt_params_parse and
		// llamafile's copy (`error: unknown argument: --server`,
		// mozilla-ai/llamafile#553), at a line's start or after a compose
		// prefix (`name  | `: `CUDA error: invalid argument` is not one);
		// Go's flag package (src/flag/flag.go@b3e36364 parseOne: `flag
		// provided but not defined: -m`, go-acme/lego#583); spf13/pflag,
		// which cobra uses (errors.go@5fdac2d1: `unknown flag: --x`,
		// `unknown shorthand flag: 'u' in -u`, spf13/cobra#1701); clap 4
		// (clap_builder/src/error/format.rs@6982fb1c: `error: unexpected
		// argument '--x' found`, `error: invalid value 'True' for
		// '--disable-custom-kernels'`, huggingface/text-generation-inference#1456,
		// #1451) and clap 2/3 (src/error/mod.rs@v3.2.25: `error: Found
		// argument '--v2' which wasn't expected, or isn't valid in this
		// context`). The runner checks every flag against the engine's
		// --help before a server starts (inputs_accepted), so a refusal at
		// start-up is the harness's too.
		Re:     regexp.MustCompile(`[Ee]rror: unrecognized arguments:|error: argument [^ :]+: invalid |error: the following arguments are required:|(?:^|\| |\w\]?: )error: (?:invalid|unknown) argument: |flag provided but not defined: -|unknown flag: --|unknown shorthand flag: '|error: unexpected argument '[^']*' found|error: invalid value '[^']*' for '-|error: Found argument '[^']*' which wasn't expected`),
		Source: "CPython argparse ArgumentParser.error; llama.cpp common/arg.cpp; Go flag; spf13/pflag; clap",
	},
	{
		Name: "kvcached disabled itself", Class: collect.ClassHarness, What: "kvcached's integration guard refused the engine's version: the plan paired an image kvcached does not support",
		// kvcached's autopatch.py begins with
		// is_integration_version_supported(lib, RANGE), which outside the
		// range logs through its logger (patch_base.py) `<lib> integration
		// disabled: <reason>; running without kvcached`, the reason
		// `unsupported version X` or `version could not be detected`
		// (tests/test_patch_version_guard.py@f65b324e0150), and patches
		// nothing. The setup case refuses such a pair when the probe read
		// the guard's range (runner integrationDisabled); this is the same
		// fact in serve.log when it could not.
		Re:     regexp.MustCompile(`\b\w+ integration disabled: [^;\n]*; running without kvcached`),
		Source: "kvcached integration/patch_base.py is_integration_version_supported",
	},
	{
		Name: "kvcached error", Class: collect.ClassProduct, What: "a traceback through kvcached's own frames, a kvcached exception or error line",
		// A Python frame in kvcached's package (`File
		// "/usr/src/kvcached/kvcached/integration/vllm/patches.py", line
		// 599, in _patched_alloc_kv`, ovg-project/kvcached#187); its
		// exceptions (kvcached/utils.py@e8e6406 KVCachedConfigError,
		// KVCachePoolExhausted); its logger's error lines (get_kvcached_logger:
		// `[kvcached][ERROR][...]`); its C++ check() (`... failed in CUDA
		// driver (N): ...`, csrc/inc/gpu_vmm.hpp). After the machine's and
		// the job's families: kvcached patches the engine's start-up, so a
		// download or port failure can pass through its frames.
		Re:     regexp.MustCompile(`File "[^"]*\bkvcached/[^"]*\.py"|KVCachedConfigError|KVCachePoolExhausted|\[kvcached\]\[ERROR\]|failed in CUDA (?:driver|runtime) \(\d+\)`),
		Source: "kvcached kvcached/utils.py, csrc/inc/gpu_vmm.hpp; Python tracebacks",
	},
	{
		Name: "CUDA kernel fault", Class: collect.ClassProduct, What: "an illegal address, a device-side assert: the serving software's fault",
		// CUDA's cudaErrorIllegalAddress (`CUDA error: an illegal memory
		// access was encountered`, vllm-project/vllm#6976),
		// cudaErrorAssert (`device-side assert triggered`),
		// cudaErrorMisalignedAddress, cudaErrorIllegalInstruction.
		Re:     regexp.MustCompile(`an illegal memory access was encountered|device-side assert(?:ion)? triggered|misaligned address|an illegal instruction was encountered`),
		Source: "CUDA runtime error strings",
	},
}

// SignatureMatch is a signature found in a log, with the line (cut, one
// line of valid UTF-8) that matched it.
type SignatureMatch struct {
	Signature
	Line string
}

// FindSignature reads r line by line (each line's first 64 KiB, as ScanLog)
// and returns the match of the earliest entry of Signatures, on the last line
// it matched: a Python traceback prints each frame's source line, which may
// hold the family's words, before the exception's own message. ok is false
// when no line matched; a read error ends the search with what was found so
// far, and is returned.
func FindSignature(r io.Reader) (m SignatureMatch, ok bool, err error) {
	s := logScanner{best: len(Signatures)} // its failure keeps the match as ScanLog's does
	err = readLines(r, 0, nil, func(_ int64, head []byte) bool {
		s.failure(strings.ToValidUTF8(string(head), "\uFFFD"))
		return true
	})
	return s.Match, s.Found, err
}

// signatureIn is the index of the first of Signatures[:upTo] that line
// matches, upTo for none.
func signatureIn(line string, upTo int) int {
	for i := range upTo {
		s := &Signatures[i]
		if mayMatch(line, signatureLiterals[i]) && s.Re.MatchString(line) && (s.Unless == nil || !s.Unless.MatchString(line)) {
			return i
		}
	}
	return upTo
}

// signatureLiterals holds, for each entry of Signatures, strings one of
// which every match of its expression contains (nil: none known): looking
// for them on each line of serve.log is about a hundred times cheaper.
var signatureLiterals = func() [][]string {
	out := make([][]string, len(Signatures))
	for i, s := range Signatures {
		re, err := syntax.Parse(s.Re.String(), syntax.Perl)
		if err != nil {
			panic(fmt.Sprintf("signature %s: %v", s.Name, err)) // compiled above, so it parses
		}
		out[i] = requiredLiterals(re.Simplify())
	}
	return out
}()

// mayMatch reports whether line holds one of lits (nil: it may match anything).
func mayMatch(line string, lits []string) bool {
	return lits == nil || slices.ContainsFunc(lits, func(l string) bool { return strings.Contains(line, l) })
}

// requiredLiterals is a set of strings one of which every match of re
// contains, nil when re gives none: a literal itself; of a concatenation,
// its part whose shortest string is longest; of an alternation, the union
// of its branches' (nil if any branch has none).
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if l := requiredLiterals(sub); l != nil && (best == nil || shortest(l) > shortest(best)) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			l := requiredLiterals(sub)
			if l == nil {
				return nil
			}
			all = append(all, l...)
		}
		return all
	}
	return nil
}

func shortest(lits []string) int {
	return len(slices.MinFunc(lits, func(a, b string) int { return cmp.Compare(len(a), len(b)) }))
}
