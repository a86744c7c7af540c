// Package engine drives inference servers (vLLM, SGLang) for the runner:
// starting a server in its own process group with its output redacted into
// serve.log, waiting for readiness, stopping the whole group, telling whether
// any of it is alive, scanning serve.log once for collect.LogInfo, its
// failure signature and excerpt (ScanLog), the HTTP clients of both
// engines, and the deterministic prompts (docs/runner.md §3).
//
// # Interrupts
//
// A server's context is the run's: once it is cancelled (SIGINT or SIGTERM)
// the group gets the stop signal at once, and Stop SIGKILLs it
// Timing.InterruptStopTimeout (2 s) after the interrupt instead of after the
// 90 s stop timeout; closing ServerConfig.Kill (a second signal) SIGKILLs it
// at once. GitHub Actions sends SIGINT, SIGTERM about 7.5 s later and SIGKILL
// 2.5 s after that: every server is gone well before.
//
// # Servers behind an exec prefix
//
// With ServerConfig.ExecPrefix (`docker exec -i NAME`), the local process
// group is only the prefix's client: killing `docker exec` does not stop the
// process it started in the container. The server is therefore started as
// `<prefix> sh -c <wrapper> ...`, a POSIX sh wrapper that prints
// `ci-report-exec-prefix: pgid N` (kept in serve.log) and execs the server
// as the leader of process group N inside the prefix (a `docker exec`
// process leads its own session already; elsewhere the wrapper uses
// setsid(1), and without it prints `pid N` and only that pid is signalled).
// Stop sends the stop signal, and SIGKILL, by running the prefix again with
// `sh -c 'kill -s INT -- -N'`, and waits until the client has exited and no
// process of group N is left there (read from the prefix's /proc, so that
// zombies a non-reaping container init keeps do not count). The prefix must
// reach the same PID namespace on every call, as `docker exec` into one
// container does, and provide sh and kill.
//
// # Readiness
//
// Start refuses a port that something already listens on, naming the
// holder (`port 18000 is already in use by pid N (cmd)`), and WaitReady
// accepts a 200 from /health only while every listening socket on the port
// that 127.0.0.1 reaches belongs to a process of the server's own group
// (the socket inodes of /proc/net/tcp and tcp6 against /proc/<pid>/fd); a
// holder outside the group fails the wait at once, named. Behind an exec
// prefix the server's processes are in another PID namespace and cannot be
// matched from the runner, so only the check before the start applies.
package engine
