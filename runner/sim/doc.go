// Package sim is the simulated GPU world behind `ci-report run --simulate`:
// inference servers that speak vLLM's and SGLang's HTTP APIs, a kvcached-like
// memory model with its ledger, kvctl, a ballast and a GPU backend, all inside
// the ci-report binary (`ci-report sim ...`, or sim.MainEnv from a test binary).
// docs/runner.md §7 describes it in full: the world directory (§7.1), `sim
// serve` (§7.2: serve.go, requests.go, kvcache.go), its memory model (§7.3),
// the helpers (§7.4), faults (§7.5) and the time scale (§7.6).
package sim
