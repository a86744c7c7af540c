#!/usr/bin/env bash
# ABBA comparison of two ci-report binaries' `import junit` (README.md, Performance) and Debian's
# python3-junitparser reading the same report and every testcase's name, classname, time and result: for each
# report, old, new, new, old, then junitparser, ROUNDS times. CPU time is user + system and peak RSS comes from
# /usr/bin/time; wall time and the load average are printed beside them. The two binaries' part directories are
# compared byte for byte.
#
#   go run ./testdata/gen -junit /tmp/j100k.xml -testcases 100000
#   testdata/abba-junit.sh OLD_BINARY NEW_BINARY /tmp/j100k.xml [more reports...]
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/jp.py" <<'PY'
import sys
from junitparser import JUnitXml
n = 0
for suite in JUnitXml.fromfile(sys.argv[1]):
    for case in suite:
        n += 1
        case.name, case.classname, case.time, case.result
print(n)
PY
measure() { # label command...: one line of figures
  local label=$1
  shift
  /usr/bin/time -f "%U %S %e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r u s e m <"$work/t"
  printf '%-34s cpu %5.2f s  wall %5.2f s  peak RSS %4d MiB  load %s\n' "$label" "$(echo "$u + $s" | bc)" "$e" \
    $((m / 1024)) "$(cut -d' ' -f1 /proc/loadavg)"
}
run() { # which binary report
  rm -rf "$work/$1"
  measure "$(basename "$3") import junit $1" "$2" import junit "$3" --part unit --out "$work/$1"
}
for report in "$@"; do
  for r in $(seq "$rounds"); do
    run old "$old" "$report"
    run new "$new" "$report"
    run new "$new" "$report"
    run old "$old" "$report"
    measure "$(basename "$report") junitparser" /usr/bin/python3 "$work/jp.py" "$report"
  done
  diff -r "$work/old" "$work/new" >/dev/null || echo "$(basename "$report"): the parts differ between the binaries"
done
