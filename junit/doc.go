// Package junit imports JUnit XML test reports as a ci-report part
// (`ci-report import junit`), so that a test suite run outside ci-report's
// runner (pytest, go test through go-junit-report, Maven Surefire, Gradle)
// is merged, rendered and published like any other part.
//
// # What is read
//
// One document per file: a <testsuites> root (nested <testsuites> too),
// Eclipse's <testrun> (read as one), or a single <testsuite> root, with
// nested <testsuite> elements. A
// <testcase> directly under a <testsuites> (node's junit reporter writes
// every top-level test so) is read as a testcase of a suite named as the
// <testsuites>, one per run of them between suites. Of a suite:
// name, tests, failures, errors, skipped (or disabled), deselected, time,
// timestamp, hostname, <properties>, <system-out>, <system-err>. Of a
// <testcase>: name, classname, time, file and line (pytest xunit1), its
// outcome elements, <properties>, <system-out>, <system-err>. Outcome
// elements are <failure>, <error> and <skipped> with their message and type
// attributes and their text, and Surefire's <rerunFailure>, <rerunError>,
// <flakyFailure> and <flakyError> (text in <stackTrace>). Unknown elements
// and attributes are skipped.
//
// Reading is streaming (encoding/xml's Decoder.Token, Strict, with no
// entity map) and bounded: a file is at most 64 MiB, elements nest at most
// 32 deep, of each text the first 64 KiB are kept, a DOCTYPE is refused
// (so no entity is ever defined, let alone expanded), and only XML's
// predefined entities and character references are accepted. A UTF-8 byte order mark is skipped, UTF-16 transcoded,
// a declared IANA charset (ISO-8859-1, windows-1252) decoded, and an XML
// 1.1 declaration read as 1.0 (asXML10). A malformed
// document, an empty file, an unknown encoding and a document whose root
// is none of those are errors naming the file and the
// line, and nothing is written. A bad value costs only itself, with a
// problem naming the file and line (Document.Problems): a testcase without
// a name is `(unnamed #k)`, a time that is not a number of seconds 0 or
// more is unknown, a count that is not a count is unknown; a <testsuites>
// or <testsuite> that declares more tests, failures and errors or skipped
// tests than its testcases (its nested suites' included) hold is a problem
// too (parser.endTally). A suite's own <failure> or <error> is kept as
// Suite.Outcomes.
//
// # The part
//
// Every testcase is one case, in file order:
//
//   - name: for a suite written by ci-report (`render --format junit`, a
//     suite property ci-report.part) the testcase's name as it is; for a
//     pytest report (a suite with pytest's attributes in its order, or
//     named "pytest": pytestReport) the node id as pytest shows it,
//     tests/test_x.py::TestA::test_b[p]; else `<classname>::<name>`, the
//     suite's name standing in for a missing classname, the name alone
//     where one holds the other at its end (CaseName). Without xunit1's
//     file attribute, the node id is rebuilt from the classname: the
//     components after the last test module's (pytest's default
//     python_files), else from the first that starts with "Test", are
//     classes, those before them the module path.
//   - checks: one per outcome element, in order. A <failure> or <error> is a
//     failed check named by its type (the exception class Surefire and
//     Gradle write), else "failure" or "error"; its detail is the message
//     on one line, cut to 300 code points, or where the message says
//     nothing the first meaningful lines of the text, system-out or
//     system-err (detail). <rerunFailure> and <rerunError>
//     are failed checks of those names, <flakyFailure> and <flakyError>
//     passed ones (the test passed when rerun). A case with no failing
//     outcome is ok with no checks.
//   - a testcase that repeats the classname and name of an earlier one of
//     its suite that failed is that test's rerun only where the producer
//     marks reruns (attemptOf: gotestsum's go.version suite, a `rerun`
//     property): one case with attempts, flaky when a rerun passed
//     (foldReruns). pytest's testcase for a teardown's error after a
//     failed call is that case's error. Another repeated name is a case
//     of its own, with its file's name or an ordinal (namer). A suite's
//     own failure is a case `<suite> (suite set-up)` (suiteSetUpCase).
//   - skipped: the reason of a <skipped> element: its message, with the
//     first line of its text when the text does not repeat the message
//     (go-junit-report writes "Skipped" and the reason in the text;
//     skipReason);
//     "expected to fail: " before a pytest xfail's; "no reason given" when
//     it has neither; "disabled" for status="disabled" or skipped="true".
//     A skipped case that also failed counts as failed.
//   - duration_s: the testcase's time.
//   - log: {"junit": {source, suite, classname, name, file, line},
//     "properties", "system_out", "system_err", "metrics"}; see collect's
//     package doc. line is 1-based: pytest writes a 0-based one, to which
//     1 is added (sourceLine), so that a check run's annotation points at
//     the test's definition.
//
// --metrics FILE adds values pytest cannot put in xunit2 (which has no
// testcase properties): JSON lines {"case": <the case's name above>,
// "name": ..., "value": <number or null>, "unit": ..., "arm"?,
// "concurrency"?, "better"?} appended to the named case's log.metrics in
// file order, held to the rules of a log's metrics (docs/formats.md §4.1,
// collect.ParseMetric). A line {"case": ..., "event": {"name": ..., "t":
// <seconds>}} instead appends an event to the case's log.events (the
// moments of docs/render.md §12.3's recovery timings), held to the rules of
// a log's events (collect.ParseEvent; a name once per case, at most
// collect.MaxEvents). A line naming no imported case, or whose metric or
// event breaks those rules, is an error naming the file and line.
//
// The part directory is written through collect's PartWriter, as the
// runner writes one (atomic files, every byte redacted): part.json first
// with the cases as its plan and complete false, setup.json (the profile,
// kvcached_sha from --revision, no engine or case setup), summary.json
// (the cases, the problems read past as "problems", the suites' declared
// counts as "suites", and
// --deselected as "deselected", else the sum of the deselected attributes
// of the innermost suites that declare one), summary.md, run.log (what was read, the
// warnings, each suite's captured output), and part.json again with
// complete true; no cases.jsonl, which keeps what a run killed mid-way
// finished (an earlier one is removed, as are summary.md and error.txt).
// part.json's started_at and finished_at span the suites'
// timestamps (a timestamp without a zone is taken as UTC) and are absent
// when none has one; host is the first suite's hostname.
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
// `ci-report import junit` of BenchmarkImportJUnit's report of 100,000
// pytest testcases (15 MB; 5% failed, 4% skipped) takes 0.85-0.95 s of CPU
// and 45-46 MiB peak RSS, where Debian's python3-junitparser 2.8.0 takes
// 0.80-0.81 s and 80 MiB only to read it and each testcase's name,
// classname, time and result; a million short passing testcases (61 MiB)
// 6.3-7.6 s and 57-58 MiB, junitparser 7.2 s and 525 MiB. Measured with
// testdata/abba.sh on a loaded 2-core machine (load average 22-24). Of
// that CPU encoding/xml's Decoder.Token takes about a third and
// summary.md's rows with their redaction and escaping about a ninth (pprof
// of BenchmarkImportJUnit).
//
// # Exports with arms
//
// ci-report's own export (`render --format junit`) of parts of several
// arms has a suite per part and arm, marked with collect.JUnitArmProperty
// and collect.JUnitRevisionProperty. Such files are imported one arm at a
// time: --arm A keeps the suites of arm A (and drops the others) and takes
// their revision unless --revision is given; without --arm, the one arm
// they hold. Suites of several arms without --arm, or none of the arm
// given, are an error naming the files and the arms.
package junit
