// Package runner executes one part of a profile (docs/runner.md): it resolves
// the plan (file format: docs/formats.md §8; parts and profiles: docs/runner.md
// §2.4), runs each case through its Kind over shared servers, clients, GPU
// backend and part writer, and writes the part directory of docs/formats.md.
//
// Every plan kind is one row of kindTable (kind.go); nothing else compares kind
// names, so a new kind is its row, its run function and its checks
// (TestToyKindIsOneRow; docs/runner.md §5). A kind gets a *Case, starts servers
// with Case.StartReady, stops each with Case.StopServer (which returns the
// shutdown checks), ends with Case.WaitNoGPUProcess, and returns Case.Result.
//
// What differs between a real run and --simulate is one Host (host.go): no
// other code asks which one it is. Sampling is docs/runner.md §4.4, the pairs'
// GPU size §2.5, versions and expectations §2.6, interrupts §9.
package runner
