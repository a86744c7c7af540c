// Package engine drives inference servers (vLLM, SGLang) for the runner: each
// in its own process group (behind an exec prefix, the group inside it), its
// output redacted into serve.log and scanned once (ScanLog), readiness, stop,
// both engines' HTTP clients and the deterministic prompts (docs/runner.md §3, §9).
package engine
