// Package engine drives inference servers (vLLM, SGLang) for the runner:
// starting a server in its own process group with its output redacted into
// serve.log, waiting for readiness, stopping the whole group (behind an exec
// prefix, the group inside it), telling whether any of it is alive, scanning
// serve.log once (ScanLog), the HTTP clients of both engines, and the
// deterministic prompts (docs/runner.md §3, interrupts §9).
package engine
