#!/usr/bin/env bash
# ABBA comparison of two ci-report binaries on kvcached-format trees and JUnit reports (README.md,
# Performance): for each tree, each command runs old, new, new, old, ROUNDS times, and Python's json.load of the
# same files once per round (kvcached's own reporter, tools/ci/report.py, reads every file with json.loads, so
# this is a lower bound of its CPU); for each report (a .xml file), `import junit` runs old, new, new, old, and
# Debian's python3-junitparser reads the report and every testcase's name, classname, time and result once per
# round. CPU time is user + system from /usr/bin/time, which does not depend on the machine's load; wall time
# and the load average are printed beside it. Outputs of the two binaries are compared byte for byte.
#
#   go test ./internal/treegen -run '^TestWrite$' -kvcached /tmp/kv3000 -cases 3000
#   go test ./internal/treegen -run '^TestWrite$' -junit /tmp/j100k.xml -testcases 100000
#   testdata/abba.sh OLD_BINARY NEW_BINARY /tmp/kv3000 /tmp/j100k.xml [more trees and reports...]
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/load.py" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.json"))):
    with open(f) as fh:
        json.load(fh)
PY
cat >"$work/jp.py" <<'PY'
import sys
from junitparser import JUnitXml
for suite in JUnitXml.fromfile(sys.argv[1]):
    for case in suite:
        case.name, case.classname, case.time, case.result
PY
measure() { # label command...: one line of figures
  local label=$1
  shift
  /usr/bin/time -f "%U %S %e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r u s e m <"$work/t"
  printf '%-34s cpu %5.2f s  wall %5.2f s  peak RSS %4d MiB  load %s\n' "$label" "$(echo "$u + $s" | bc)" "$e" \
    $((m / 1024)) "$(cut -d' ' -f1 /proc/loadavg)"
}
run() { # which binary tree
  local name=$1 bin=$2 tree=$3 out=$work/$1
  mkdir -p "$out"
  measure "$(basename "$tree") render $name" "$bin" render --date 2026-11-28 --comment "$out/c.md" --section "$out/s.md" "$tree"
  measure "$(basename "$tree") merge $name" "$bin" merge --out "$out/merged.json" "$tree"
  measure "$(basename "$tree") render merged.json $name" "$bin" render --date 2026-11-28 --comment "$out/cm.md" --section "$out/sm.md" "$out/merged.json"
}
report() { # which binary report
  rm -rf "$work/$1"
  measure "$(basename "$3") import junit $1" "$2" import junit "$3" --part unit --out "$work/$1"
}
for tree in "$@"; do
  if [[ $tree == *.xml ]]; then
    for r in $(seq "$rounds"); do
      report old "$old" "$tree"
      report new "$new" "$tree"
      report new "$new" "$tree"
      report old "$old" "$tree"
      measure "$(basename "$tree") junitparser" /usr/bin/python3 "$work/jp.py" "$tree"
    done
    diff -r "$work/old" "$work/new" >/dev/null || echo "$(basename "$tree"): the parts differ between the binaries"
    continue
  fi
  for r in $(seq "$rounds"); do
    run old "$old" "$tree"
    run new "$new" "$tree"
    run new "$new" "$tree"
    run old "$old" "$tree"
    measure "$(basename "$tree") python json.load" python3 "$work/load.py" "$tree"
  done
  for f in c.md s.md merged.json cm.md sm.md; do
    cmp -s "$work/old/$f" "$work/new/$f" || echo "$(basename "$tree"): $f differs between the binaries"
  done
done
