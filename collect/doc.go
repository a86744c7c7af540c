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
// Objects whose order shows in a report keep their file order (Ordered).
//
//   - The artifact tree, which directories are parts, their names and order,
//     and the reading rules common to every file (only regular files, opened
//     without blocking): docs/formats.md §1. LoadPartsWith, LoadPerf.
//   - Part status (complete, partial, missing), its Reason and what a
//     defect of a file or a case costs: §1.3 and §4.6.
//   - part.json (PartMeta): §2. setup.json (Setup, CaseSetup, KindSetup,
//     KindEntry; the format before kinds in legacy.go): §3.
//   - summary.json and CaseResult, log per kind of case, check details,
//     ledger samples (LedgerSample), usage timelines (UsageSample,
//     ParseUsage), cases.jsonl, imported parts, failure classes (Classes),
//     log excerpts (Excerpt) and machine facts: §4.
//   - summary.md (SummaryMarkdown): §5. Perf artifacts (PerfSetup,
//     PerfSummary, PerfRun): §6.
//
// phases hold every request's tokens and make summary.json hundreds of MB:
// the token readers (jsontext) of summary.json and cases.jsonl skip them
// (read.go, fastpath.go, skipvalue.go, jsonlex.go; docs/formats.md §4.6)
// and hold nothing whole in memory beyond the bounds of maxKeptValue,
// maxKeptDepth and maxKeptString. Readers keep log as raw JSON, compacted
// (CompactJSON), or not at all with LoadOptions.SkipLogs.
package collect
