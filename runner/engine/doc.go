// Package engine drives inference servers (vLLM, SGLang) for the runner:
// starting a server in its own process group with its output redacted into
// serve.log, waiting for readiness, stopping the whole group, telling whether
// any of it is alive, scanning serve.log once (ScanLog), the HTTP clients of
// both engines, and the deterministic prompts (docs/runner.md §3).
//
// Behind ServerConfig.ExecPrefix (`docker exec -i NAME`) killing the local
// client does not stop the server, so it is started through a sh wrapper that
// reports its process group inside the prefix, and Stop signals that group
// through the prefix again (docs/runner.md §3.3.1). Readiness accepts /health
// only while every socket on the port belongs to the server's own group
// (docs/runner.md §3.2); interrupts are docs/runner.md §9.
package engine
