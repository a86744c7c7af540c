#!/bin/sh
# Writes seed 002's reports as its suites really run (junit/testdata/README.md):
# the parent arm runs only the focused regression test; the fix arm runs it, the
# targeted suite, the broad suite and ruff. Needs Debian's python3-pytest.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/rlt"
py=/usr/bin/python3
focused='tests/test_scheduler.py::test_prefill_livelock[seed-8-refill]'
run() { # arm name args...
	arm=$1 name=$2
	shift 2
	rm -f "$here/$arm-$name.jsonl"
	REVISION=$arm CI_METRICS="$here/$arm-$name.jsonl" PYTHONDONTWRITEBYTECODE=1 \
		$py -m pytest -p no:cacheprovider -q --junitxml="$here/$arm-$name.xml" "$@" || true
	[ -s "$here/$arm-$name.jsonl" ] || rm -f "$here/$arm-$name.jsonl"
}
run parent focused "$focused"
run fix focused "$focused"
run fix targeted -m "not slow" tests/test_scheduler.py
run fix broad -m "not slow" tests/broad
# ruff is not packaged for Debian 12: fix-lint.xml is what `ruff check
# --format junit` wrote for a clean tree before ruff 0.0.270 (astral-sh/ruff
# PR closing #4502 added a "No errors found" testcase): quick-junit's report with
# no suite, 4-space indent.
printf '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ruff" tests="0" failures="0" errors="0">\n</testsuites>\n' >"$here/fix-lint.xml"
