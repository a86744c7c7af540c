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
	},
	"GPU driver not initialised": {
		{"https://github.com/NVIDIA/nvidia-docker/issues/988", "> NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure"},
		{"https://github.com/ci-for-research/self-hosted-runners/issues/40", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."},
		{"https://github.com/ameli/manylinux-cuda/issues/5", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."},
		{"https://github.com/mattshma/bigdata/issues/133", "[188497.595099] NVRM: No NVIDIA graphics adapter probed!"},
		{"https://github.com/NVIDIA/nvidia-container-toolkit/issues/816", "Failed to initialize NVML: Unknown Error"},
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
}
