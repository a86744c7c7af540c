#!/usr/bin/python3
"""The reference for `ci-report import junit` (README.md, Performance): Debian's
python3-junitparser reads a JUnit XML report and every testcase's name, class,
time, results (failure/error/skipped: kind, type, message, text) and output
(system-out, system-err), and writes each testcase as one JSON line, as
`import junit` writes each case into a part.

    /usr/bin/python3 junitparser_read.py REPORT.xml OUT.jsonl
"""
import json
import sys

from junitparser import JUnitXml, TestSuite


def suites(xml):
    """The report's test suites, nested ones included (the root may be
    <testsuites> or a single <testsuite>)."""
    stack = [xml] if isinstance(xml, TestSuite) else list(xml)
    while stack:
        suite = stack.pop(0)
        yield suite
        stack[0:0] = list(suite.iterchildren(TestSuite))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: junitparser_read.py REPORT.xml OUT.jsonl")
    report, out = sys.argv[1], sys.argv[2]
    n = 0
    with open(out, "w", encoding="utf-8") as w:
        for suite in suites(JUnitXml.fromfile(report)):
            for case in suite:
                results = [{"kind": r._tag, "type": r.type, "message": r.message, "text": r.text}
                           for r in case.result]
                w.write(json.dumps({"suite": suite.name, "name": case.name,
                                    "classname": case.classname, "time": case.time,
                                    "results": results, "system_out": case.system_out,
                                    "system_err": case.system_err}, ensure_ascii=False))
                w.write("\n")
                n += 1
    print(f"{report}: {n} testcases written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
