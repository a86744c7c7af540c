// Package sim is the simulated GPU world behind `ci-report run --simulate`:
// inference servers that speak vLLM's and SGLang's HTTP APIs, a kvcached-like
// memory model with its ledger, kvctl, a ballast and a GPU backend, all inside
// the ci-report binary (`ci-report sim ...`, or sim.MainEnv from a test binary).
// docs/runner.md §7 describes it in full; in short:
//
//   - A world is a directory (CI_REPORT_SIM_DIR, or --dir) made by NewWorld:
//     gpus.json, procs/<pid>.json (live processes), segments/<ipc>.json (the
//     kvctl ledger; `<ipc>_g1.json` for an SGLang hybrid server's Mamba pool),
//     shm/, tmp/ (kvcached's socket dirs), world.lock (flock taken for every
//     allocation decision and ledger update) and gpu_peaks.json (high-water
//     marks that Peaks.ReadPeaks returns and restarts). NewGPU reads it as a
//     gpu.Backend; records of dead processes are ignored (checked through
//     /proc, the start time guarding against pid reuse).
//   - `sim serve --engine vllm|sglang -- <real argv>` is a server (serve.go,
//     requests.go, kvcache.go): memory model §7.3, faults §7.5
//     (CI_REPORT_SIM_FAULTS), time scale §7.6 (CI_REPORT_SIM_TIMESCALE).
//   - `sim kvctl`, `sim ballast`, `sim world`, `sim versions`, `sim script`
//     and `sim models` are the helpers of §7.4.
package sim
