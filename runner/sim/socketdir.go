package sim

import (
	"crypto/sha1"
	"encoding/hex"
	"path/filepath"
)

// nsDNS is uuid.NAMESPACE_DNS (6ba7b810-9dad-11d1-80b4-00c04fd430c8), the
// namespace kvcached hashes its IPC name in.
var nsDNS = [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// socketDirName is the TP worker socket directory kvcached makes in /tmp for
// ipc: `kvcached-tp-<ipc>-<uuid.uuid5(NAMESPACE_DNS, ipc).hex[:8]>`
// (kvcached/tp_ipc_util.py@2513db15eee5 (v0.1.5) and @e8e640638ba7,
// `_get_socket_dir_name`, l.16-27): the first 4 bytes of SHA-1(namespace +
// name), before the version and variant bits.
func socketDirName(ipc string) string {
	h := sha1.New()
	h.Write(nsDNS[:])
	h.Write([]byte(ipc))
	return "kvcached-tp-" + ipc + "-" + hex.EncodeToString(h.Sum(nil)[:4])
}

// socketDir is the socket directory of ipc in the world's simulated /tmp.
func (w *world) socketDir(ipc string) string {
	return filepath.Join(TmpDir(w.dir), socketDirName(ipc))
}

// makesSocketDir says whether a kvcached server of engine at TP size tp
// creates a socket directory: vLLM starts kvcached's worker listener at any
// TP size (kvcached/integration/vllm/interfaces.py@e8e640638ba7 l.90-93,
// @2513db15eee5 l.70-73), SGLang only when world_size > 1
// (kvcached/integration/sglang/interfaces.py).
func makesSocketDir(engine string, tp int) bool {
	return engine != "sglang" || tp > 1
}
