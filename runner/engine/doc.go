// Package engine drives inference servers (vLLM, SGLang) for the runner:
// starting a server in its own process group with its output redacted into
// serve.log, waiting for readiness, stopping the whole group, telling whether
// any of it is alive, parsing serve.log into collect.LogInfo, the HTTP
// clients of both engines, and the deterministic prompts (docs/runner.md §3).
package engine
