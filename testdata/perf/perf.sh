#!/usr/bin/env bash
# CPU time (user + system) and peak RSS of ci-report's commands, two binaries alternated, against kvcached's own
# reporter and junitparser (issue 34 item 2; README.md "Performance"). Builds nothing.
#
#   KVCACHED_REPORT=/path/to/report.py TREES=DIR JUNIT=FILE testdata/perf/perf.sh BIN_A BIN_B ROUNDS
#
# Round r runs A then B when r is odd, B then A when it is even. In each round, for each tree of N = 27, 300, 3000
# kvcached-format cases (TREES/N, 8 parts each), each binary runs
#   merge --out M <tree>;  render --date D --comment C --section S M;  render --date D --comment C --section S <tree>
# and then kvcached's tools/ci/report.py@28183ff (KVCACHED_REPORT) reads the same tree:
#   python3 report.py correctness --results <tree>/<part>... --profile weekly --comment C --section S --run-url U --sha X
# For the JUnit report (JUNIT, 100,000 pytest testcases) each binary runs
#   import junit JUNIT --part unit --out DIR
# and then junitparser_read.py (Debian's python3-junitparser) reads it and writes every testcase as a JSON line.
# Figures come from /usr/bin/time -f '%U %S %M'; the table gives medians over the rounds. Outputs of A and B are
# compared byte for byte at the end (a difference is reported, not fatal). Everything written goes to a temporary
# directory that is removed on exit.
#
# Inputs, written by the tree generator (absolute paths), and kvcached's reporter, read from
# github.com/ovg-project/kvcached at 28183ff (tools/ci/report.py; never committed here):
#   go test ./internal/treegen -run '^TestWrite$' -count=1 -kvcached DIR/N -cases N   # N = 27, 300, 3000
#   go test ./internal/treegen -run '^TestWrite$' -count=1 -junit FILE
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 BIN_A BIN_B ROUNDS" >&2
  exit 2
fi
bin_a=$(realpath "$1") bin_b=$(realpath "$2") rounds=$3
here=$(dirname "$(realpath "$0")")
trees=${TREES:?TREES names the directory of the trees 27, 300 and 3000}
junit=${JUNIT:?JUNIT names the 100,000-testcase report}
report_py=${KVCACHED_REPORT:?KVCACHED_REPORT names kvcached tools/ci/report.py}
jp_py=$here/junitparser_read.py
py=${PYTHON:-/usr/bin/python3}
sizes=${SIZES:-27 300 3000}
date=2026-11-28

die() { echo "run.sh: $*" >&2; exit 1; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
for b in "$bin_a" "$bin_b"; do [[ -x $b ]] || die "$b is not an executable file"; done
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install -y time)"
[[ -f $report_py ]] || die "kvcached's reporter $report_py is missing"
[[ -f $junit ]] || die "the JUnit report $junit is missing (see the header of $0)"
"$py" -c 'import junitparser' 2>/dev/null || die "$py cannot import junitparser (apt-get install -y python3-junitparser)"
for n in $sizes; do
  compgen -G "$trees/$n/*/summary.json" >/dev/null || die "no kvcached-format tree at $trees/$n (see the header of $0)"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$work/raw.tsv
: >"$raw"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# measure INPUT COMMAND PROGRAM argv...: runs argv under /usr/bin/time, appends one line to raw.tsv.
measure() {
  local input=$1 command=$2 program=$3
  shift 3
  if ! /usr/bin/time -f '%U %S %M' -o "$work/t" "$@" >"$work/out" 2>"$work/err"; then
    echo "run.sh: $program $command on $input failed: $*" >&2
    tail -n 20 "$work/err" >&2
    exit 1
  fi
  local u s m
  read -r u s m <"$work/t"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$input" "$command" "$program" "$u" "$s" "$m" >>"$raw"
}

# tree_cmds WHO BIN N: merge, render of merged.json, render of the tree; outputs under $work/WHO/N.
tree_cmds() {
  local who=$1 bin=$2 n=$3 tree=$trees/$3 out=$work/$1/$3
  rm -rf "$out" && mkdir -p "$out"
  measure "$n cases" merge "$who" "$bin" merge --out "$out/merged.json" "$tree"
  measure "$n cases" "render merged.json" "$who" "$bin" render --date "$date" \
    --comment "$out/cm.md" --section "$out/sm.md" "$out/merged.json"
  measure "$n cases" "render tree" "$who" "$bin" render --date "$date" \
    --comment "$out/c.md" --section "$out/s.md" "$tree"
}

junit_cmd() { # WHO BIN
  local out=$work/$1/junit
  rm -rf "$out"
  measure "$(basename "$junit")" "import junit" "$1" "$2" import junit "$junit" --part unit --out "$out"
}

for r in $(seq "$rounds"); do
  if ((r % 2)); then order=(A B); else order=(B A); fi
  for n in $sizes; do
    for who in "${order[@]}"; do
      if [[ $who == A ]]; then tree_cmds A "$bin_a" "$n"; else tree_cmds B "$bin_b" "$n"; fi
    done
    mkdir -p "$work/ref/$n"
    parts=("$trees/$n"/*/)
    measure "$n cases" "report.py correctness" report.py "$py" "$report_py" correctness \
      --results "${parts[@]%/}" --profile weekly --comment "$work/ref/$n/c.md" --section "$work/ref/$n/s.md" \
      --run-url https://github.com/ovg-project/kvcached/actions/runs/1 \
      --sha 28183ff482dcad9dac331ed9a3afa5f3597e0a97
  done
  for who in "${order[@]}"; do
    if [[ $who == A ]]; then junit_cmd A "$bin_a"; else junit_cmd B "$bin_b"; fi
  done
  measure "$(basename "$junit")" "junitparser_read.py" junitparser "$py" "$jp_py" "$junit" "$work/ref/junit.jsonl"
  echo "round $r of $rounds done (order ${order[*]}, load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

differ=()
for n in $sizes; do
  for f in merged.json cm.md sm.md c.md s.md; do
    cmp -s "$work/A/$n/$f" "$work/B/$n/$f" || differ+=("$n/$f")
  done
done
diff -r "$work/A/junit" "$work/B/junit" >/dev/null || differ+=("import junit part")

echo "A = $bin_a"
echo "B = $bin_b"
echo "reference: $report_py (kvcached 28183ff) and $(basename "$jp_py") (junitparser $("$py" -c \
  'import junitparser; print(junitparser.version)')), $("$py" --version)"
echo "$rounds round(s), order alternated; load average at start $load_start, at end $(cut -d' ' -f1-3 /proc/loadavg);" \
  "$(nproc) CPUs"
echo
"$py" - "$raw" <<'PY'
import statistics, sys
rows, inputs, commands = {}, {}, {}
for line in open(sys.argv[1]):
    inp, cmd, prog, u, s, m = line.rstrip("\n").split("\t")
    inputs.setdefault(inp, len(inputs))
    commands.setdefault(cmd, len(commands))
    rows.setdefault((inp, cmd, prog), []).append((float(u) + float(s), int(m) / 1024))
# inputs and commands in the order first measured, A before B within a command
key = lambda k: (inputs[k[0]], commands[k[1]], {"A": 0, "B": 1}.get(k[2], 2))
print("| input | command | program | CPU s (median) | peak RSS MiB (median) | runs |")
print("|---|---|---|---|---|---|")
for (inp, cmd, prog) in sorted(rows, key=key):
    v = rows[(inp, cmd, prog)]
    cpu = statistics.median(c for c, _ in v)
    rss = statistics.median(m for _, m in v)
    print(f"| {inp} | {cmd} | {prog} | {cpu:.2f} | {rss:.0f} | {len(v)} |")
PY
echo
if ((${#differ[@]})); then
  echo "outputs that differ between A and B: ${differ[*]}"
else
  echo "outputs of A and B are byte-identical (merged.json, comments, sections, import junit part)"
fi
