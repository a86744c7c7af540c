// Package junit imports JUnit XML test reports as a ci-report part
// (`ci-report import junit`), so that a test suite run outside ci-report's
// runner (pytest, go test through go-junit-report, Maven Surefire, Gradle)
// is merged, rendered and published like any other part. docs/formats.md
// §4.7 specifies the part it writes, how cases are named, the quirks of
// real reporters it reads, and what is read within which bounds ("XML",
// "Roots"); unknown elements and attributes are skipped.
//
// # Memory
//
// An import holds no case: each testcase is converted, named and written,
// in its final bytes, when its end tag is read (stream.go), to temporary
// files from which the part's files are put together at the end (a byte
// copy: nothing is encoded or indented twice). What is kept is counters,
// every case name as a 64-bit hash (namer), the failed test names of the
// suite being read, the records and output of the suites of one top-level
// suite, a problem per suite at most, and the metrics file: at most 64 MiB
// plus twice the largest testcase at any size up to DefaultMaxBytes
// (TestImportMemoryBounded: 7-10 MiB of live heap for 200,000 testcases).
// The exceptions are read twice and cost their size: a suite with a
// rerun, with its own failure or testcases after a nested suite, or with
// properties after its testcases is held whole while it is read, and
// ci-report's exports of several arms are read again for the arm kept.
// encoding/xml holds the token being read (a text, an attribute value)
// whole.
//
// # Speed
//
// README.md's performance table measures `ci-report import junit` against
// junitparser (BenchmarkImportJUnit). Of its CPU encoding/xml's
// Decoder.Token takes about a third and summary.md's rows with their
// redaction and escaping about a ninth (pprof).
package junit
