// Package collect holds the artifact formats of ci-report as Go types, reads
// a tree of parts from disk, and writes a part for the runner.
//
// docs/formats.md is the reference of the wire format and of the rules
// between the files; this comment only maps it onto the package.
// Everything is UTF-8 JSON. Readers ignore unknown fields; a known field of
// the wrong type is an error that names the file and the field, such as
//
//	read /results/vllm/setup.json: cases[2].tp: want integer, got string
//
// Objects whose order shows in a report (checks and every *_checks,
// engines, env, model_revisions, perf models) keep their file order: they
// are read into Ordered.
//
//   - The artifact tree, which directories are parts, their names and order,
//     and the reading rules common to every file (only regular files, opened
//     without blocking): docs/formats.md §1. LoadPartsWith, LoadPerf.
//   - Part status (complete, partial, missing) and its Reason: §1.3 and §4.6.
//     A defect of one case leaves out that case alone, with a problem naming
//     the file, its index and the field; a malformed part.json or setup.json
//     is treated as absent and its error kept in Part.Problems.
//   - part.json (PartMeta): §2. setup.json (Setup, CaseSetup, KindSetup,
//     KindEntry; the format before kinds in legacy.go): §3.
//   - summary.json and CaseResult, log per kind of case, check details,
//     ledger samples (LedgerSample), usage timelines (UsageSample,
//     ParseUsage), cases.jsonl, imported parts, failure classes (Classes),
//     log excerpts (Excerpt) and machine facts: §4.
//   - summary.md (SummaryMarkdown): §5. Perf artifacts (PerfSetup,
//     PerfSummary, PerfRun): §6.
//
// phases hold every request's tokens and make summary.json hundreds of MB.
// The readers of summary.json and cases.jsonl skip them while reading
// (validated, never decoded nor held: read.go, fastpath.go, skipvalue.go,
// jsonlex.go) and decode only the other fields of CaseResult; parts are read
// in parallel. Files are never held whole in memory: summary.json and
// cases.jsonl stream through a 256 KiB buffer, a kept value over 64 MiB,
// nested deeper than 64 or holding a string over 8 MiB (maxKeptString) is
// read to its end but not held, and the small files read whole (part.json,
// setup.json, the perf files) are refused over 64 MiB. Readers keep log as
// raw JSON, compacted (CompactJSON), or not at all with LoadOptions.SkipLogs.
package collect
