package engine

import (
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// signatureLines are real lines of each signature of Signatures, as the
// engines, the kernel and the tools print them.
var signatureLines = []struct {
	sig, line string
}{
	// The kernel's Xid 79 (NVIDIA's Xid catalog).
	{"GPU lost", "[Tue Dec  1 03:14:22 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid=4105, name=VLLM::Worker, GPU has fallen off the bus."},
	// nvidia-smi once the GPU is gone.
	{"GPU lost", "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU"},
	// PyTorch raising CUDA's cudaErrorECCUncorrectable.
	{"ECC error", "torch.AcceleratorError: CUDA error: uncorrectable ECC error encountered"},
	{"ECC error", "NVRM: Xid (PCI:0000:01:00): 48, pid=12542, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0."},
	{"ECC error", "NVRM: Xid (PCI:0000:01:00): 94, pid=12542, name=VLLM::Worker, Contained ECC error."},
	// forums.developer.nvidia.com/t/xid-62-xid-154-gsp-pmu-halt-crash-on-rtx-pro-6000-blackwell-during-llm-inference/364958
	{"GPU Xid error", "Mar 27 17:40:36 kernel: NVRM: Xid (PCI:0000:01:00): 62, 223b6a66 00002100 00000000 20662342 20662ba6 20664272 2065f7ca 2063f48c"},
	{"GPU Xid error", "Mar 27 17:40:36 kernel: NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"},
	// mm/oom_kill.c __oom_kill_process.
	{"a process was OOM-killed", "[18492.104] Out of memory: Killed process 4182 (python3) total-vm:81204400kB, anon-rss:51842000kB, file-rss:1240kB, shmem-rss:0kB, UID:0 pgtables:112640kB oom_score_adj:0"},
	{"a process was OOM-killed", "Memory cgroup out of memory: Killed process 4182 (VLLM::EngineCor) total-vm:812044kB, anon-rss:518420kB, file-rss:1240kB, shmem-rss:0kB"},
	{"disk full", "OSError: [Errno 28] No space left on device: '/root/.cache/huggingface/hub/models--Qwen--Qwen3.5-4B/blobs/3f9e.incomplete'"},
	// uvicorn's log of asyncio's create_server error (the simulator writes the same).
	{"port taken", "ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 18001): address already in use"},
	{"port taken", "start server vllm-qwen05b-kv_c1: listen tcp 127.0.0.1:18001: bind: address already in use"},
	// The runner's readiness wait (Server.WaitReady), as server_ready records it.
	{"a foreign server on the port", `server vllm-qwen05b-kv_c1: port 18001 answers as another server (GET /v1/models lists "e2e" (root "Qwen/Qwen2.5-0.5B-Instruct"), not "e2e_1_vllm-qwen05b-kv_c1", the served name this run gave the server), so its answers are not the server's`},
	{"port taken", "server limit-vllm-qwen05b: port 18003 is held by pid 4242 (python3 -m http.server 18003), not by the server's process group 4100, so its answers are not the server's"},
	// huggingface_hub file_download.py _raise_on_head_call_error.
	{"model download failed", "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the Hub and we cannot find the requested files in the local cache. Please check your connection and try again or make sure your Internet connection is on."},
	{"model download failed", "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-6745) Cannot access gated repo for url https://huggingface.co/google/gemma-4-E2B-it/resolve/main/config.json."},
	{"image pull or container failed", "Error response from daemon: pull access denied for vllm/vllm-openai-nightly, repository does not exist or may require 'docker login': denied: requested access to the resource is denied"},
	{"image pull or container failed", "Error response from daemon: container 3f9e2d1c0b4a is not running"},
	{"no GPU visible", "RuntimeError: No CUDA GPUs are available"},
	// vllm-project/vllm#16343.
	{"memory refusal", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 350.00 MiB. GPU 0 has a total capacity of 23.68 GiB of which 212.81 MiB is free."},
	// vllm-project/vllm#10439, #23192; sgl-project/sglang#4330.
	{"memory refusal", "vllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."},
	{"memory refusal", "(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712] ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."},
	{"memory refusal", "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."},
	// vLLM's KV-cache sizing, v1 (vllm-project/vllm#34076) and v0 (QwenLM/Qwen3#295).
	{"memory refusal", "(EngineCore_DP0 pid=1094) ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, the estimated maximum model length is 34736."},
	{"memory refusal", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."},
	// NVIDIA/NVSentinel#155: the multi-line wording, its last line.
	{"GPU lost", "               NVRM: fallen off the bus and is not responding to commands."},
	// haotian-liu/LLaVA#1466: nvidia-smi once NVML cannot reach the GPU.
	{"GPU lost", "Unable to determine the device handle for GPU0000:4F:00.0: Unknown Error"},
	// NVIDIA/open-gpu-kernel-modules#1150: an Xid 45 caused by an NVLink Xid.
	{"GPU Xid error", "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149"},
	// NVIDIA/open-gpu-kernel-modules#1230.
	{"GPU Xid error", "[   84.738339] NVRM: GPU6 RPC event history (CPU <- GSP):"},
	// lllyasviel/Fooocus#1313; NVIDIA/nvidia-docker#182; mozilla/translations#1167.
	{"driver and CUDA mismatch", "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver."},
	{"driver and CUDA mismatch", "Aug 26 14:08:07 nyasara-linux kernel: NVRM: API mismatch: the client has the version 367.44, but"},
	{"driver and CUDA mismatch", "[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library version mismatch"},
	// Tencent-Hunyuan/InstantCharacter#21.
	{"GPU busy or unavailable", "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"},
	// NVIDIA/nccl#328.
	{"NCCL system error", "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied"},
	// vllm-project/vllm#11617; jina-ai/clip-as-service#84.
	{"port taken", "RuntimeError: The server socket has failed to listen on any local network address. useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"},
	{"port taken", "zmq.error.ZMQError: Address already in use"},
	// The runner's own wait (engine.Server.WaitReady).
	{"port taken", "server vllm-qwen05b-kv_c1: port 18001 is held by pid 4242 (python3), not by the server's process group 4100, so its answers are not the server's"},
	// boson-ai/higgs-audio#123.
	{"model not found", "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-68a1df1f-3274fba05f177c4f00891218;d37ebc83-0dd4-4ea6-b71f-4d08e297cfa1)"},
	// sgl-project/sglang#14644; opea-project/GenAIExamples#2237.
	{"model download failed", "OSError: You are trying to access a gated repo."},
	{"model download failed", "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json"},
	// vllm-project/vllm#8273.
	{"command line refused", "vllm: error: unrecognized arguments: --config"},
	// kvcached's logger's prefix (kvcached/utils.py get_kvcached_logger) and
	// the message its test_patch_version_guard.py@f65b324e0150 asserts; the
	// line number in patch_base.py is not known here.
	{"kvcached disabled itself", "[kvcached][WARNING][2026-12-01 09:14:02][patch_base.py:61] vllm integration disabled: unsupported version 0.33.0; running without kvcached"},
	{"kvcached disabled itself", "[kvcached][WARNING][2026-12-01 09:14:02][patch_base.py:57] sglang integration disabled: version could not be detected; running without kvcached"},
	// ovg-project/kvcached#187.
	{"kvcached error", `(EngineCore_DP0 pid=924148) ERROR 10-25 00:09:55 [core.py:779]   File "/usr/src/kvcached/kvcached/integration/vllm/patches.py", line 599, in _patched_alloc_kv`},
	// vllm-project/vllm#6976.
	{"CUDA kernel fault", "RuntimeError: CUDA error: an illegal memory access was encountered"},
}

func TestSignatures(t *testing.T) {
	covered := map[string]bool{}
	lines := slices.Clone(signatureLines)
	for name, fl := range Families {
		for _, l := range fl {
			lines = append(lines, struct{ sig, line string }{name, l.line})
		}
	}
	for _, tc := range lines {
		m, ok, err := FindSignature(strings.NewReader("INFO starting\n" + tc.line + "\nINFO after\n"))
		if err != nil || !ok || m.Name != tc.sig {
			t.Errorf("%q: got %q (found %v, err %v), want %q", tc.line, m.Name, ok, err, tc.sig)
			continue
		}
		if m.Line != text.CutLine(tc.line, 200) {
			t.Errorf("%q: line %q", tc.sig, m.Line)
		}
		covered[tc.sig] = true
	}
	for _, s := range Signatures {
		if !covered[s.Name] {
			t.Errorf("signature %q has no real line in signatureLines", s.Name)
		}
		if !collect.KnownClass(s.Class) || s.Class == collect.ClassUnclassified || s.Source == "" {
			t.Errorf("signature %q: class %q, source %q", s.Name, s.Class, s.Source)
		}
	}
}

func TestFindSignatureNone(t *testing.T) {
	for _, log := range []string{
		"",
		"INFO Application startup complete.\n",
		// An application's own Xid (an illegal address) is not the machine's.
		"NVRM: Xid (PCI:0000:01:00): 13, pid=4105, name=python3, Graphics Exception: ESR 0x405848=0x80000000\n",
		"NVRM: Xid (PCI:0000:01:00): 31, pid=4105, name=VLLM::Worker, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34560000\n",
		// huggingface_hub's retry warnings alone (Toyhom/CLV#2,
		// AUTOMATIC1111/stable-diffusion-webui#17165): a retry that
		// succeeds is no failure.
		"'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /openai/clip-vit-large-patch14/resolve/main/merges.txt (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7fc30f2ea230>: Failed to establish a new connection: [Errno 101] Network is unreachable'))\"), '(Request ID: 5f7287e5-2203-46b5-9dcf-e03db5035a99)')' thrown while requesting HEAD https://huggingface.co/openai/clip-vit-large-patch14/resolve/main/merges.txt\n" +
			"Retrying in 1s [Retry 1/5].\nWARNING:huggingface_hub.utils._http:Retrying in 1s [Retry 1/5].\n",
		// PyTorch's NCCL watchdog after another crash (vllm-project/vllm#12233).
		"Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1601 (most recent call first):\n",
		"Traceback (most recent call last):\n",
	} {
		if m, ok, err := FindSignature(strings.NewReader(log)); ok || err != nil {
			t.Errorf("%q: found %q (err %v)", log, m.Name, err)
		}
	}
}

func TestFindSignaturePrecedence(t *testing.T) {
	// The memory refusal comes first, but a lost GPU explains it.
	log := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB\n" +
		strings.Repeat("x", 200_000) + "\n" + // a long line on the way
		"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n" +
		"OSError: [Errno 28] No space left on device"
	m, ok, err := FindSignature(strings.NewReader(log))
	if err != nil || !ok || m.Name != "GPU lost" || m.Class != collect.ClassInfra {
		t.Fatalf("got %+v, %v, %v", m, ok, err)
	}
}

// TestSignatureLiterals: every signature has strings to look for before
// its expression runs (else every line of every log pays for it), each
// one a part of every match; the real lines of TestSignatures still match.
func TestSignatureLiterals(t *testing.T) {
	for i, s := range Signatures {
		if len(signatureLiterals[i]) == 0 {
			t.Errorf("signature %q: no literal found in %s", s.Name, s.Re)
		}
	}
	for _, tc := range []struct {
		re   string
		want []string
	}{
		{`GPU has fallen off the bus|GPU is lost`, []string{"has fallen off the bus", "is lost"}},
		{`NVRM: Xid \(PCI:[^)]*\): (61|62)\b`, []string{"NVRM: Xid (PCI:"}},
		{`(?:Out of memory|Memory cgroup out of memory): Killed process \d+`, []string{": Killed process "}},
		{`a|\d+`, nil},
		{`(?i)cuda`, nil},
	} {
		re, err := syntax.Parse(tc.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := requiredLiterals(re.Simplify()); !slices.Equal(got, tc.want) {
			t.Errorf("%s: literals %q, want %q", tc.re, got, tc.want)
		}
	}
}
