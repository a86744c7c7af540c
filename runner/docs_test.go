package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// TestDocsDescribeEveryCheck: every check whose "passes when" text setup.json
// carries is described in docs/runner.md (§5), so that a check added to a
// kind cannot go undocumented.
func TestDocsDescribeEveryCheck(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "runner.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for kind, tab := range checkTables() {
		for _, name := range tab.Keys() {
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("%s: check %s is not in docs/runner.md", kind, name)
			}
		}
	}
}

// checkTables are the "passes when" tables setup.json carries, by kind:
// the server case's and those of the kind table's blocks.
func checkTables() map[string]collect.Ordered[string] {
	tables := map[string]collect.Ordered[string]{KindServer: ServerChecks()}
	for _, k := range kindTable {
		if k.block != nil {
			tables[k.name] = k.block.checks()
		}
	}
	return tables
}

// tableKindNames are the kind table's kinds, in its order.
func tableKindNames() []string {
	var names []string
	for _, k := range kindTable {
		names = append(names, k.name)
	}
	return names
}

// failureOnlyChecks are the checks a passing run never records, by kind
// ("any": every kind): each is recorded only when its case cannot go on
// (docs/runner.md §5.7, and "(only when failing)" in §5.8), and each has its
// own test that provokes it. A reader of a failed one still needs what it
// checks: each must have its "passes when" text in its kind's setup.json
// table (every kind's, for "any") and in a docs/runner.md table, and be a
// check name the runner's source records.
var failureOnlyChecks = map[string][]string{
	KindSetup:    {"gpu_available"},
	KindElastic:  {"ballast_ready", "elastic_plan"},
	KindLimit:    {"limit_plan"},
	KindPriority: {"ballast_ready", "priority_plan"},
	"any":        {"case_completed", "inputs_accepted"},
}

// emittedCheck is one check name a simulated run recorded, with the server
// names of its case (what `<server>`, `<A>`, `<L>`, ... stand for).
type emittedCheck struct {
	kind, caseName, name string
	servers              []string
}

// TestEveryEmittedCheckIsDescribed ties the check names the runner records
// to their descriptions, both ways: simulated runs of every kind (a hybrid
// model's kvcached and native server cases, an elastic pair, a limit case, a
// priority pair, and the setup case) record checks; each must match an entry
// of its kind's "passes when" table (setup.json: ServerChecks,
// checks.ElasticChecks, LimitChecks, PriorityChecks) and of its kind's row in
// docs/runner.md §5.8, and every entry of those tables and rows must match a
// recorded check (or be one of failureOnlyChecks): no description of a check
// nobody records.
func TestEveryEmittedCheckIsDescribed(t *testing.T) {
	t.Parallel()
	emitted := emittedChecks(t)
	shutdown := shutdownCheckNames()
	tables := checkTables()
	docRows := docsEveryCheck(t)
	passesWhen := docsPassesWhen(t)
	source := runnerSource(t)
	for kind, names := range failureOnlyChecks {
		kinds := []string{kind}
		if kind == "any" {
			kinds = tableKindNames()
		}
		for _, name := range names {
			ks := kinds
			if name == "inputs_accepted" {
				// Of the plan's servers: a command case has none to refuse.
				ks = slices.DeleteFunc(slices.Clone(kinds), func(n string) bool { k, _ := kindOf(n); return k.command })
			}
			if !strings.Contains(source, `"`+name+`"`) {
				t.Errorf("failureOnlyChecks: %s (%s) is recorded nowhere in the runner's source", name, kind)
			}
			if passesWhen[name] == "" {
				t.Errorf("failureOnlyChecks: %s (%s) has no \"passes when\" text in a docs/runner.md table", name, kind)
			}
			for _, k := range ks {
				emitted = append(emitted, emittedCheck{kind: k, caseName: "(failure only)", name: name})
			}
		}
	}
	matches := func(key string, e emittedCheck) bool {
		re, err := checkPattern(key, e.servers, shutdown)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return re.MatchString(e.name)
	}
	matchesAny := func(keys []string, e emittedCheck) bool {
		return slices.ContainsFunc(keys, func(k string) bool { return matches(k, e) })
	}
	for _, e := range emitted {
		if tab, ok := tables[e.kind]; ok && !matchesAny(tab.Keys(), e) {
			t.Errorf("%s case %s records %s, which no entry of its setup.json checks table describes", e.kind, e.caseName, e.name)
		}
		if !matchesAny(docRows[e.kind], e) && !matchesAny(docRows["any"], e) {
			t.Errorf("%s case %s records %s, which docs/runner.md §5.8 does not list for %s", e.kind, e.caseName, e.name, e.kind)
		}
	}
	described := map[string][]string{} // where → its keys, by kind
	for kind, tab := range tables {
		described[kind+" setup.json checks"] = tab.Keys()
	}
	for kind, keys := range docRows {
		described[kind+" docs/runner.md §5.8"] = keys
	}
	for _, where := range slices.Sorted(maps.Keys(described)) {
		kind, _, _ := strings.Cut(where, " ")
		for _, key := range described[where] {
			if !slices.ContainsFunc(emitted, func(e emittedCheck) bool { return (kind == "any" || e.kind == kind) && matches(key, e) }) {
				t.Errorf("%s: %s describes a check no %s case recorded", where, key, kind)
			}
		}
	}
	for _, kind := range append(tableKindNames(), "any") {
		if len(docRows[kind]) == 0 {
			t.Errorf("docs/runner.md §5.8 has no row for %s", kind)
		}
	}
}

// emittedChecks runs every kind against the simulator and returns the
// checks recorded: nightly's setup case and hybrid-model server group
// (kvcached and native cases), and of every kind with a setup.json block
// the first case of the first built-in profile that has one (nightly's
// elastic pair and limit case, weekly's priority pair), so a kind shipped in
// a profile is run here without a line of this test.
func emittedChecks(t *testing.T) []emittedCheck {
	t.Helper()
	var out []emittedCheck
	type run struct {
		profile string
		cases   []string
	}
	runs := []run{{"nightly", []string{"vllm-setup", "vllm-qwen35_4b-*"}}}
	for _, k := range kindTable {
		if k.block == nil {
			continue // the setup and server cases: above
		}
		profile, name := firstCaseOfKind(t, k.name)
		i := slices.IndexFunc(runs, func(r run) bool { return r.profile == profile })
		if i < 0 {
			runs = append(runs, run{profile: profile})
			i = len(runs) - 1
		}
		runs[i].cases = append(runs[i].cases, name)
	}
	for _, run := range runs {
		res, r := serverSim(t, run.profile, run.cases, "", context.Background(), func(r *Runner) {
			r.BallastCmd = append(slices.Clone(r.Host.(*Sim).Self), "ballast")
		})
		if !res.OK || len(res.NotRun) > 0 {
			t.Fatalf("%s %v did not pass (not run: %v): its checks would not be all a run records", run.profile, run.cases, res.NotRun)
		}
		entries := map[string]Entry{}
		for _, e := range r.Plan.Cases {
			entries[e.Name] = e
		}
		for _, c := range res.Cases {
			e, ok := entries[c.Name]
			if !ok {
				t.Fatalf("case %s is not in the plan", c.Name)
			}
			var servers []string
			for _, sp := range e.Servers {
				servers = append(servers, sp.Name)
			}
			for _, ch := range c.Checks {
				out = append(out, emittedCheck{kind: e.Kind, caseName: c.Name, name: ch.Name, servers: servers})
			}
		}
	}
	return out
}

// firstCaseOfKind is the first case of the kind in the first built-in
// profile that has one.
func firstCaseOfKind(t *testing.T, kind string) (profile, name string) {
	t.Helper()
	for _, profile := range Profiles {
		for _, e := range mustPlan(t, profile).Cases {
			if e.Kind == kind {
				return profile, e.Name
			}
		}
	}
	t.Fatalf("no built-in profile has a %s case: its checks cannot be run here", kind)
	return "", ""
}

// shutdownCheckNames are the unprefixed names checks.ShutdownChecks records,
// for a kvcached and a native server.
func shutdownCheckNames() []string {
	var names []string
	for _, kv := range []bool{true, false} {
		for _, c := range checks.ShutdownChecks("", checks.Shutdown{Kvcached: kv}) {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// checkPattern compiles a described check name into a regexp of the names it
// stands for in a case whose servers are servers: `<A>`/`<L>` the first
// server, `<B>`/`<H>` the second, `<server>`/`<case>` any of them,
// `<phase>` a compared phase, `<n>` a number, `<shutdown check>` a shutdown
// check. An unknown placeholder is an error, so a new one cannot match
// anything by accident.
func checkPattern(key string, servers, shutdown []string) (*regexp.Regexp, error) {
	alt := func(names ...string) string {
		if len(names) == 0 {
			return `\x00` // a name never contains NUL: matches nothing
		}
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = regexp.QuoteMeta(n)
		}
		return "(?:" + strings.Join(q, "|") + ")"
	}
	server := func(i int) string {
		if i < len(servers) {
			return alt(servers[i])
		}
		return alt()
	}
	var b strings.Builder
	b.WriteString("^")
	rest := key
	for {
		open := strings.IndexByte(rest, '<')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		end := strings.IndexByte(rest[open:], '>')
		if end < 0 {
			return nil, fmt.Errorf("unclosed placeholder")
		}
		b.WriteString(regexp.QuoteMeta(rest[:open]))
		switch ph := rest[open+1 : open+end]; ph {
		case "A", "L":
			b.WriteString(server(0))
		case "B", "H":
			b.WriteString(server(1))
		case "server", "case":
			b.WriteString(alt(servers...))
		case "phase":
			b.WriteString(alt(ComparedPhases...))
		case "n":
			b.WriteString(`[0-9]+`)
		case "shutdown check":
			b.WriteString(alt(shutdown...))
		default:
			return nil, fmt.Errorf("unknown placeholder <%s>", ph)
		}
		rest = rest[open+end+1:]
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// docsEveryCheck reads docs/runner.md §5.8's table: kind → the check names
// (and patterns) its row lists; "the shutdown checks of" stands for
// `<server>_<shutdown check>`.
func docsEveryCheck(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "runner.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n### 5.8 Every check\n")
	if !ok {
		t.Fatal("docs/runner.md has no §5.8 Every check")
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	rows := map[string][]string{}
	name := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) != 2 {
			continue
		}
		kind, list := strings.TrimSpace(cells[0]), cells[1]
		if kind == "kind" || strings.HasPrefix(kind, "-") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(list, -1) {
			if n := m[1]; !(strings.HasPrefix(n, "<") && strings.HasSuffix(n, ">")) { // `<server>` alone names a server, not a check
				rows[kind] = append(rows[kind], n)
			}
		}
		if strings.Contains(list, "the shutdown checks of") {
			rows[kind] = append(rows[kind], "<server>_<shutdown check>")
		}
	}
	return rows
}

// docsPassesWhen reads every table of docs/runner.md whose second column
// is "passes when": check name → its text, for each name quoted in a row's
// first cell.
func docsPassesWhen(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "runner.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	name := regexp.MustCompile("`([^`]+)`")
	inTable := false
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		switch {
		case !strings.HasPrefix(line, "|") || len(cells) < 2:
			inTable = false
		case strings.TrimSpace(cells[1]) == "passes when":
			inTable = true
		case inTable && !strings.HasPrefix(strings.TrimSpace(cells[0]), "-"):
			for _, m := range name.FindAllStringSubmatch(cells[0], -1) {
				out[m[1]] = strings.TrimSpace(cells[1])
			}
		}
	}
	return out
}

// runnerSource is the runner's non-test Go source, all files together.
func runnerSource(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, glob := range []string{"*.go", filepath.Join("checks", "*.go")} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
		}
	}
	return b.String()
}

// TestDocsSignatureTable: §5.10's table has one row per entry of
// engine.Signatures, in its order, with its class ("judged" for a memory
// refusal), and nothing else.
func TestDocsSignatureTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "runner.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n### 5.10 Failure classes\n")
	if !ok {
		t.Fatal("docs/runner.md has no §5.10 Failure classes")
	}
	_, table, ok := strings.Cut(sec, "\n| signature | class | catches |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/runner.md §5.10 has no signature table")
	}
	var rows [][2]string
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.SplitN(strings.Trim(line, "|"), "|", 3)
		rows = append(rows, [2]string{strings.TrimSpace(cells[0]), strings.TrimSpace(cells[1])})
	}
	var want [][2]string
	for _, s := range engine.Signatures {
		class := s.Class
		if s.Memory {
			class = "judged (step 3)"
		}
		want = append(want, [2]string{s.Name, class})
	}
	if !slices.Equal(rows, want) {
		t.Errorf("docs/runner.md §5.10 table rows (name, class):\n%q\nengine.Signatures:\n%q", rows, want)
	}
}
