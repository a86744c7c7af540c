package render_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// The well-formedness tests parse every rendered document back with goldmark
// (GFM, as GitHub renders it) and check the structure, not the bytes: the
// golden files prove the bytes did not change, these prove the bytes are right
// for any input.

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// tb is the part of testing.TB the checks use, so that a test can run them
// on bad documents and see them complain.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatal(args ...any)
}

// docCheck is what one document is checked against.
type docCheck struct {
	name string
	doc  string
	// details allows the collapsed `<details>` block of the pull-request
	// comment; every other document has no HTML but the marker comment.
	details bool
	// rep, when set, is the report whose failed and not-run cases the
	// document's failed-cases table must list.
	rep *merge.Report
	// setup, when set, is the merged setup whose server cases the section's
	// cases table must list, each with its case flags.
	setup *collect.Setup
}

var (
	markerRE  = regexp.MustCompile(`^<!-- ci-report:comment run=[A-Za-z0-9._-]+ attempt=[A-Za-z0-9._-]+ profile=[a-z0-9][a-z0-9_-]* -->$`)
	detailsRE = regexp.MustCompile(`^(<details><summary>(Setup of every case|Known upstream issues: [^<>]*|Memory chart of this case|Tracebacks of the failures above|How the servers start|The [0-9]+ cases?|Workload and checks)</summary>|</details>)$`)
	// A failed co-location case's chart is collapsed in any comment
	// (docs/render.md §3.9).
	chartDetailsRE = regexp.MustCompile(`^<details><summary>(Memory chart of this case|Tracebacks of the failures above|How the servers start|The [0-9]+ cases?|Workload and checks)</summary>$`)
	// What GitHub turns into a notification or a cross-reference.
	mentionRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_` + "`" + `])@[A-Za-z0-9]`)
	issueRE   = regexp.MustCompile(`(?:^|[^A-Za-z0-9_&/])#[0-9]+\b|[A-Za-z0-9-]+/[A-Za-z0-9._-]+#[0-9]+\b|(?i:\bgh-[0-9]+)`)
	// The mark after a known check's detail, as plainText reads it.
	knownMarkRE = regexp.MustCompile(`^ \(known: ⟨a⟩[^⟨]*⟨/a⟩\)`)
	sepRE       = regexp.MustCompile(`^\|(\s*:?-+:?\s*\|)+\s*$`)
	fenceRE     = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
	// Zero-width characters a renderer may use to break a mention; they are
	// not part of the text a reader sees.
	zeroWidth = strings.NewReplacer("\u200d", "", "\u2060", "", "\u200b", "", "\ufeff", "")
)

// unsafeRune is what no document may hold: a control character other than
// the newline between lines, or a bidirectional control.
func unsafeRune(r rune) bool {
	return r < 0x20 && r != '\n' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f || r == 0x061c || r == 0x2028 || r == 0x2029
}

// checkDoc runs every structural check on one document.
func checkDoc(t tb, dc docCheck) {
	t.Helper()
	if !utf8.ValidString(dc.doc) {
		t.Errorf("%s: not valid UTF-8", dc.name)
	}
	if i := strings.IndexFunc(dc.doc, unsafeRune); i >= 0 {
		t.Errorf("%s: control or bidirectional character %U at %q", dc.name, []rune(dc.doc[i:])[0], dc.doc[max(0, i-20):min(len(dc.doc), i+20)])
	}
	tables := scanTables(t, dc)
	src := []byte(dc.doc)
	root := gfm.Parser().Parse(gmtext.NewReader(src))
	var parsed []*extast.Table
	openDetails := 0
	err := ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *extast.Table:
			parsed = append(parsed, v)
			checkParsedTable(t, dc.name, v)
		case *ast.HTMLBlock:
			for _, line := range htmlBlockLines(v, src) {
				switch {
				case line == "":
				case markerRE.MatchString(line):
				case strings.HasPrefix(line, "<!-- ci-report:digest "):
					// The run's digest (docs/formats.md §9): one line that
					// reads back as a valid digest, whatever the names.
					if js, ok := marker.DigestOf(line); !ok {
						t.Errorf("%s: digest line %q is not closed", dc.name, text.Cut(line, 200))
					} else if _, err := render.ParseDigest(js); err != nil {
						t.Errorf("%s: the digest does not read back: %v", dc.name, err)
					}
				case detailsRE.MatchString(line) && (dc.details || chartDetailsRE.MatchString(line) || line == "</details>" && openDetails > 0):
					if strings.HasPrefix(line, "</") {
						openDetails--
					} else {
						openDetails++
					}
					if openDetails < 0 || openDetails > 1 {
						t.Errorf("%s: <details> blocks out of order at %q", dc.name, line)
					}
				default:
					t.Errorf("%s: raw HTML block line %q (only the marker comment%s may be HTML)", dc.name, line,
						map[bool]string{true: " and the <details> block", false: ""}[dc.details])
				}
			}
		case *ast.RawHTML:
			var b strings.Builder
			for i := 0; i < v.Segments.Len(); i++ {
				seg := v.Segments.At(i)
				b.Write(seg.Value(src))
			}
			t.Errorf("%s: inline raw HTML %q", dc.name, b.String())
		case *ast.AutoLink:
			// Every link of ours is written [text](url); a bare URL or www.
			// that GitHub links came from run text (an issue or pull
			// request URL even cross-references it). Mail addresses are
			// harmless.
			if v.AutoLinkType != ast.AutoLinkEmail {
				t.Errorf("%s: run text became a link: %q", dc.name, v.URL(src))
			}
		case *ast.Paragraph, *extast.TableCell, *ast.Heading, *ast.ListItem:
			plain := plainText(n, src, false)
			if m := mentionRE.FindString(plain); m != "" {
				t.Errorf("%s: a mention survives (%q) in %q", dc.name, m, plain)
			}
			if m := issueRE.FindString(plain); m != "" {
				t.Errorf("%s: an issue reference survives (%q) in %q", dc.name, m, plain)
			}
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if openDetails != 0 {
		t.Errorf("%s: %d <details> block(s) not closed", dc.name, openDetails)
	}
	if len(parsed) != tables {
		t.Errorf("%s: %d tables in the text, but goldmark parses %d", dc.name, tables, len(parsed))
	}
	if dc.rep != nil {
		checkFailedTable(t, dc, parsed, src)
	}
	if dc.setup != nil {
		checkCasesTable(t, dc, parsed, src)
	}
}

// scanTables checks fences and table rows line by line, the way GitHub splits
// them (a backslash escapes the next character, so `\|` is not a cell border),
// and returns how many tables it found.
func scanTables(t tb, dc docCheck) int {
	t.Helper()
	lines := strings.Split(dc.doc, "\n")
	fence := ""
	tables := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(m[2]) == "":
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.HasPrefix(line, "|") || i+1 >= len(lines) || !sepRE.MatchString(lines[i+1]) {
			continue
		}
		tables++
		header := cellCount(line)
		if n := cellCount(lines[i+1]); n != header {
			t.Errorf("%s line %d: separator has %d cells, header %d", dc.name, i+2, n, header)
		}
		j := i + 2
		for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if n := cellCount(lines[j]); n != header {
				t.Errorf("%s line %d: %d cells, header has %d: %q", dc.name, j+1, n, header, lines[j])
			}
			if !strings.HasSuffix(lines[j], "|") || strings.HasSuffix(lines[j], `\|`) && !strings.HasSuffix(lines[j], `\\|`) {
				t.Errorf("%s line %d: row does not end with a cell border: %q", dc.name, j+1, lines[j])
			}
		}
		i = j - 1
	}
	if fence != "" {
		t.Errorf("%s: code fence %q not closed", dc.name, fence)
	}
	return tables
}

// cellCount counts the cells of a table row written `| a | b |`.
func cellCount(line string) int {
	line = strings.TrimSpace(line)
	borders := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			borders++
		}
	}
	return borders - 1
}

func checkParsedTable(t tb, name string, tb *extast.Table) {
	t.Helper()
	want := -1
	for row := tb.FirstChild(); row != nil; row = row.NextSibling() {
		n := row.ChildCount()
		if want < 0 {
			want = n
		} else if n != want {
			t.Errorf("%s: parsed table row with %d cells, header %d", name, n, want)
		}
	}
}

func htmlBlockLines(b *ast.HTMLBlock, src []byte) []string {
	var out []string
	for i := 0; i < b.Lines().Len(); i++ {
		seg := b.Lines().At(i)
		out = append(out, strings.TrimRight(string(seg.Value(src)), "\r\n"))
	}
	if b.HasClosure() {
		out = append(out, strings.TrimRight(string(b.ClosureLine.Value(src)), "\r\n"))
	}
	return out
}

// plainText is the text a reader sees in n: escapes and entities resolved,
// soft breaks as spaces. With marks, code spans are wrapped in ⟦ ⟧ and
// emphasis, links and raw HTML are marked, so that run text that turned into
// markup shows as a difference; without, code spans become a space (GitHub
// finds no mentions in them).
func plainText(n ast.Node, src []byte, marks bool) string {
	var b strings.Builder
	inCode := 0
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		switch v := n.(type) {
		case *ast.CodeSpan:
			if entering {
				inCode++
			} else {
				inCode--
			}
			if marks {
				b.WriteString(map[bool]string{true: "⟦", false: "⟧"}[entering])
			} else {
				b.WriteString(" ")
			}
		case *ast.Emphasis:
			if marks {
				b.WriteString(map[bool]string{true: "⟨em⟩", false: "⟨/em⟩"}[entering])
			}
		case *ast.Link:
			if marks {
				b.WriteString(map[bool]string{true: "⟨a⟩", false: "⟨/a⟩"}[entering])
			}
		case *ast.RawHTML:
			if entering && marks {
				b.WriteString("⟨html⟩")
			}
		case *ast.AutoLink:
			if entering {
				b.Write(v.Label(src))
			}
		case *ast.Text:
			if !entering {
				break
			}
			if inCode > 0 && !marks {
				break
			}
			seg := v.Segment.Value(src)
			if v.IsRaw() {
				b.Write(seg)
			} else {
				b.WriteString(unescape(seg))
			}
			if v.SoftLineBreak() || v.HardLineBreak() {
				b.WriteString(" ")
			}
		case *ast.String:
			if !entering || inCode > 0 && !marks {
				break
			}
			if v.IsCode() || v.IsRaw() {
				b.Write(v.Value)
			} else {
				b.WriteString(unescape(v.Value))
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// unescape resolves backslash escapes and entities as goldmark's HTML
// renderer does, then undoes the HTML escaping.
func unescape(seg []byte) string {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	gmhtml.DefaultWriter.Write(w, seg)
	_ = w.Flush()
	return html.UnescapeString(buf.String())
}

// listed reports whether the case belongs in the failed-cases table: not
// run, or a failed check that no known issue covers, or not ok without any
// failed check.
func listed(c *merge.Case) bool {
	if c.NotRun {
		return true
	}
	anyFailed := false
	for i, ch := range c.Checks {
		if !ch.OK {
			anyFailed = true
			if _, known := c.KnownIssueOf(i); !known {
				return true
			}
		}
	}
	return !anyFailed && !c.OK
}

// checkFailedTable finds the `| case | failed checks | class |` table and
// checks that it lists the report's failed and not-run cases in order, with
// each name and each check detail reading back as the original text (cut to
// 300 code points, `…` included, or shorter when the budget needed it).
func checkFailedTable(t tb, dc docCheck, tables []*extast.Table, src []byte) {
	t.Helper()
	var want []*merge.Case
	for i := range dc.rep.Cases {
		if listed(&dc.rep.Cases[i]) {
			want = append(want, &dc.rep.Cases[i])
		}
	}
	var tb *extast.Table
	hasClass := true
	for _, cand := range tables {
		h := cand.FirstChild()
		switch {
		case h != nil && h.ChildCount() == 3 && plainText(h, src, true) == "casefailed checksclass":
			tb = cand
		case h != nil && h.ChildCount() == 2 && plainText(h, src, true) == "casefailed checks":
			// No case has a class (docs/render.md §3.4).
			tb, hasClass = cand, false
		}
	}
	if tb == nil {
		if len(want) > 0 {
			t.Errorf("%s: %d failed or not-run cases, but no failed-cases table", dc.name, len(want))
		}
		return
	}
	rowKey := render.RowKeys(dc.rep)
	keys := make(map[*merge.Case]string, len(want))
	for _, c := range want {
		keys[c] = rowKey(c)
	}
	rows, listedCases, remaining := 0, 0, want
	for row := tb.FirstChild().NextSibling(); row != nil; row = row.NextSibling() {
		if len(remaining) == 0 {
			t.Errorf("%s: more rows than failed cases", dc.name)
			break
		}
		// A row holds the next case and every later one that fails alike
		// (docs/render.md §3.4).
		c := remaining[0]
		members, rest := []*merge.Case{c}, []*merge.Case(nil)
		for _, o := range remaining[1:] {
			if keys[o] == keys[c] {
				members = append(members, o)
			} else {
				rest = append(rest, o)
			}
		}
		remaining = rest
		rows++
		listedCases += len(members)
		nameCell := row.FirstChild()
		checksCell := nameCell.NextSibling()
		gotName := zeroWidth.Replace(plainText(nameCell, src, true))
		if msg := matchCaseCell(members, gotName); msg != "" {
			t.Errorf("%s row %d: %s", dc.name, rows, msg)
		}
		class := c.Class
		if class == "" {
			class = collect.ClassUnclassified
		}
		if !hasClass {
			if class != collect.ClassUnclassified {
				t.Errorf("%s row %d (%s): no class column, but the case has class %q", dc.name, rows, c.Name, class)
			}
		} else if got := zeroWidth.Replace(plainText(checksCell.NextSibling(), src, true)); got != class && !strings.HasPrefix(got, class+": ") && !strings.HasPrefix(got, class+" on ") && got != class+", unexplained" {
			t.Errorf("%s row %d (%s): class cell %q, want %q", dc.name, rows, c.Name, got, class)
		}
		got := zeroWidth.Replace(plainText(checksCell, src, true))
		if msg := matchChecks(c, got); msg != "" {
			t.Errorf("%s row %d (%s): failed-checks cell %q: %s", dc.name, rows, c.Name, got, msg)
		}
	}
	if rows == 0 && len(want) > 0 {
		t.Errorf("%s: the failed-cases table has no rows", dc.name)
	}
	if more := len(want) - listedCases; more > 0 {
		line := fmt.Sprintf("and %d more; see the run's job summary.", more)
		if !strings.Contains(dc.doc, "\n"+line+"\n") {
			t.Errorf("%s: %d rows of %d failed cases, but no line %q", dc.name, rows, len(want), line)
		}
	} else if rows > 30 {
		t.Errorf("%s: %d rows, at most 30 allowed", dc.name, rows)
	}
}

// matchCaseCell says what is wrong with the case cell of a row holding
// members, or "": a row of one case reads its label, a row of several
// `<n> cases: <label>, ...`, the first ten named, the rest counted.
func matchCaseCell(members []*merge.Case, got string) string {
	label := func(c *merge.Case) string {
		if strings.HasSuffix(c.Name, "-setup") {
			return flat(c.Name + " (" + c.Part + ")")
		}
		return flat(c.Name)
	}
	if len(members) == 1 {
		if got != flat(members[0].Name) && got != label(members[0]) {
			return fmt.Sprintf("case cell reads %q, want %q", got, label(members[0]))
		}
		return ""
	}
	names := make([]string, 0, 10)
	for _, m := range members[:min(len(members), 10)] {
		names = append(names, label(m))
	}
	want := fmt.Sprintf("%d cases: %s", len(members), strings.Join(names, ", "))
	if len(members) > 10 {
		want += fmt.Sprintf(", and %d more", len(members)-10)
	}
	if got != want {
		return fmt.Sprintf("case cell reads %q, want %q", got, want)
	}
	return ""
}

// flat is text as a table cell shows it: newlines and tabs as spaces, other
// controls and bidirectional characters as U+FFFD, without the zero-width
// characters that break mentions.
func flat(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	s = strings.Map(func(r rune) rune {
		switch {
		// A tab shows as white space either way; the renderer may write a space.
		case r == '\n' || r == '\r' || r == '\t' || r == 0x85 || r == 0x2028 || r == 0x2029:
			return ' '
		case unsafeRune(r):
			return '\uFFFD'
		}
		return r
	}, s)
	return zeroWidth.Replace(s)
}

// matchChecks says what is wrong with a failed-checks cell's text, or "".
func matchChecks(c *merge.Case, got string) string {
	if c.NotRun {
		if got != "not run" {
			return `want "not run"`
		}
		return ""
	}
	// The cell lists the root checks; those that follow from them are
	// counted after them (docs/render.md §3.4).
	var failed []collect.Check
	var known []bool // known[i]: failed[i] is covered by a known issue
	roots, following := collect.RootChecks(c.Checks)
	for _, j := range roots {
		failed = append(failed, c.Checks[j])
		_, k := c.KnownIssueOf(j)
		known = append(known, k)
	}
	if following > 0 {
		what, from := "checks that follow", "them"
		if following == 1 {
			what = "check that follows"
		}
		if len(roots) == 1 {
			from = "it"
		}
		tail := fmt.Sprintf(" and %d %s from %s", following, what, from)
		if !strings.HasSuffix(got, tail) {
			return fmt.Sprintf("no %q at the end", tail)
		}
		got = strings.TrimSuffix(got, tail)
	}
	if len(failed) == 0 {
		if got != "no failed check recorded" {
			return `want "no failed check recorded"`
		}
		return ""
	}
	rest := got
	for i, ch := range failed {
		if i > 0 && known[i-1] {
			// A known check's mark follows its detail (docs/render.md §3.4).
			m := knownMarkRE.FindString(rest)
			if m == "" {
				return fmt.Sprintf("known check %s has no ` (known: <link>)` at %q", failed[i-1].Name, rest)
			}
			rest = rest[len(m):]
		}
		if i > 0 {
			if !strings.HasPrefix(rest, "; ") {
				return fmt.Sprintf("no `; ` before check %s at %q", ch.Name, rest)
			}
			rest = rest[2:]
		}
		head := "⟦" + flat(ch.Name) + "⟧"
		if !strings.HasPrefix(rest, head) {
			return fmt.Sprintf("check %s not in a code span at %q", ch.Name, rest)
		}
		rest = rest[len(head):]
		if ch.Detail == "" || !strings.HasPrefix(rest, " (") {
			continue // no detail, or the budget dropped details
		}
		detail := []rune(flat(render.CheckDetail(&ch)))
		if strings.HasPrefix(rest, " ("+string(detail)+")") && len(detail) <= 300 {
			rest = rest[len(" ("+string(detail)+")"):]
			continue
		}
		matched := false
		for n := min(len(detail), 300); n >= 1; n-- {
			cut := " (" + string(detail[:n-1]) + "…)"
			if strings.HasPrefix(rest, cut) {
				rest, matched = rest[len(cut):], true
				break
			}
		}
		if !matched {
			return fmt.Sprintf("detail of %s does not read back as %q cut to at most 300 code points", ch.Name, string(detail))
		}
	}
	if known[len(failed)-1] {
		m := knownMarkRE.FindString(rest)
		if m == "" {
			return fmt.Sprintf("known check %s has no ` (known: <link>)` at %q", failed[len(failed)-1].Name, rest)
		}
		rest = rest[len(m):]
	}
	if rest != "" {
		return fmt.Sprintf("unexpected text after the last check: %q", rest)
	}
	return ""
}

// caseFlags is the case flags of docs/render.md §1.2, written independently of the
// renderer: model args as flag/value pairs, without the flags that the
// extra args set again, then every extra arg.
func caseFlags(cs collect.CaseSetup) string {
	again := map[string]bool{}
	for _, a := range cs.ExtraArgs {
		if strings.HasPrefix(a, "--") {
			again[a] = true
		}
	}
	var out []string
	for i := 0; i < len(cs.ModelArgs); i++ {
		flag := cs.ModelArgs[i]
		n := 1
		if i+1 < len(cs.ModelArgs) && !strings.HasPrefix(cs.ModelArgs[i+1], "--") {
			n = 2
		}
		if !again[flag] {
			out = append(out, cs.ModelArgs[i:i+n]...)
		}
		i += n - 1
	}
	return strings.Join(append(out, cs.ExtraArgs...), " ")
}

// checkCasesTable finds the section's `| case | model | ... | case flags |`
// table and checks each row's case name and flags against the setup. A
// section that had to replace the table by its summary has none to check.
func checkCasesTable(t tb, dc docCheck, tables []*extast.Table, src []byte) {
	t.Helper()
	var tb *extast.Table
	for _, cand := range tables {
		if h := cand.FirstChild(); h != nil && plainText(h, src, true) == "casemodelKV cacheTPKV dtypecase flags" {
			tb = cand
			break
		}
	}
	if tb == nil {
		return
	}
	i := 0
	for row := tb.FirstChild().NextSibling(); row != nil; row = row.NextSibling() {
		if i >= len(dc.setup.Cases) {
			t.Errorf("%s: the cases table has more rows than setup.json has cases", dc.name)
			return
		}
		cs := dc.setup.Cases[i]
		i++
		if got := zeroWidth.Replace(plainText(row.FirstChild(), src, true)); got != flat(cs.Name) {
			t.Errorf("%s: cases table row %d reads %q, want case %q", dc.name, i, got, flat(cs.Name))
		}
		got := plainText(row.LastChild(), src, true)
		want := flat(caseFlags(cs))
		switch {
		case want == "" && got == "":
		case got == "⟦"+want+"⟧":
		case strings.Contains(want, `\|`) && zeroWidth.Replace(got) == want:
			// A backslash before a pipe cannot be shown in a code span in a cell.
		default:
			t.Errorf("%s: case flags of %s read %q, want %q in a code span", dc.name, cs.Name, got, want)
		}
	}
	if i != len(dc.setup.Cases) {
		t.Errorf("%s: the cases table has %d rows, setup.json %d cases", dc.name, i, len(dc.setup.Cases))
	}
}

// TestWellFormed checks every document rendered from the artifact trees.
func TestWellFormed(t *testing.T) {
	atRoot(t)
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			rep := gc.load(t)
			docs := gc.render(t, rep)
			opts := gc.options()
			// The comment shows the report as classified with the known
			// issues, whose own block is collapsed (docs/render.md §10).
			checkDoc(t, docCheck{name: "comment", doc: docs.Comment, details: opts.PR > 0 || len(opts.KnownIssues) > 0, rep: rep.WithKnownIssues(opts.KnownIssues)})
			if docs.Section != "" {
				checkDoc(t, docCheck{name: "section", doc: docs.Section, setup: rep.Setup})
			}
			checkBudgets(t, docs)
			checkHeadline(t, docs, opts)
		})
	}
}

func checkBudgets(t tb, docs render.Documents) {
	t.Helper()
	if n := utf8.RuneCountInString(docs.Comment); n > render.CommentBudget {
		t.Errorf("comment has %d code points, budget %d", n, render.CommentBudget)
	}
	if n := utf8.RuneCountInString(docs.Section); n > render.SectionBudget {
		t.Errorf("section has %d code points, budget %d", n, render.SectionBudget)
	}
}

// checkHeadline: the header line with its verdict and the run link always
// survive, whatever the budget did to the rest.
var allPassedRE = regexp.MustCompile(`(?m)^All \d+ cases passed\.$`)

func checkHeadline(t tb, docs render.Documents, opts render.Options) {
	t.Helper()
	lines := strings.Split(docs.Comment, "\n")
	head := 0
	if opts.RunID != "" {
		if !markerRE.MatchString(lines[0]) {
			t.Errorf("first line %q is not the marker comment", lines[0])
		}
		head = 1
	}
	if head >= len(lines) || !strings.HasPrefix(lines[head], "### ") || !strings.HasSuffix(lines[head], " · "+docs.Verdict) {
		t.Errorf("header line %q: want `### <title> · <date> · %s`", lines[min(head, len(lines)-1)], docs.Verdict)
	}
	// The body never contradicts the verdict: "All N cases passed." only
	// under PASS.
	if docs.Verdict != "PASS" && allPassedRE.MatchString(docs.Comment) {
		t.Errorf("verdict %s, but the comment says every case passed", docs.Verdict)
	}
	// A run that did not run is only a header and a reason (docs/render.md §3.7).
	if opts.RunURL != "" && docs.Verdict != "DID NOT RUN" && !strings.Contains(docs.Comment, "("+opts.RunURL+")") {
		t.Errorf("the run link %s is missing", opts.RunURL)
	}
}

// hostile are fragments a check detail may hold: Markdown and HTML
// punctuation, mentions and references, entities, escapes, wide and
// combining characters, newlines and backtick runs.
var hostile = []string{
	"|", `\`, `\|`, "`", "```", "````x````", "\n", "*", "_", "[", "]", "(x)", "<", ">", "<details>", "</details>",
	"<!--", "-->", "<img src=x>", "@someone", "@org/team", "#1", "#12345", "ovg-project/kvcached#45", "&amp;", "&#64;x",
	"&lt;", "~~", "#", "!", "$x", "${{ secrets.X }}", "  ", "\t", "é", "e\u0301", "漢字", "👩‍🔬", "🇯🇵", "\u200d",
	"http://example.com/a_b", "www.example.com", "- ", "1. ", "> ", "---", "===", "::", "%s",
	"GH-5", "gh-12", "https://github.com/ovg-project/kvcached/issues/12", "http://github.com/o/r/pull/7", "WWW.github.com/o/r/pull/8",
	"\x1b[31m", "\a", "\b", "\v", "\f", "\x7f", "\u0085", "\u009b", "\u202e", "\u202a", "\u2066", "\u2069", "\u200f", "\u061c", "\u2028",
}

func randomText(r *rand.Rand, maxRunes int) string {
	if maxRunes == 0 {
		return ""
	}
	var b strings.Builder
	target := r.IntN(maxRunes + 1)
	for utf8.RuneCountInString(b.String()) < target {
		if r.IntN(3) == 0 {
			b.WriteString(hostile[r.IntN(len(hostile))])
		} else {
			b.WriteString([]string{"alloc ", "failed ", "MiB ", "prompt 3: ", "kvcached ", "native ", "9120 ", "of "}[r.IntN(8)])
		}
	}
	return b.String()
}

// TestWellFormedBudgetProperty renders seeded random reports with up to
// thousands of failures and details up to thousands of code points, and
// checks every budget and the structure of every document.
func TestWellFormedBudgetProperty(t *testing.T) {
	atRoot(t)
	base := goldenCase{name: "nightly-fail", tree: "nightly-fail"}
	baseRep := base.load(t)
	baseJSON, err := json.Marshal(baseRep)
	if err != nil {
		t.Fatal(err)
	}
	type shape struct{ failures, checks, detail, extraSetups int }
	shapes := []shape{
		{0, 0, 0, 0}, {1, 1, 300, 0}, {1, 3, 301, 0}, {29, 2, 299, 0}, {30, 2, 300, 0}, {31, 2, 301, 0},
		{200, 4, 2000, 0}, {2000, 1, 50, 0}, {500, 3, 5000, 400}, {40, 2, 300, 2000},
	}
	r := rand.New(rand.NewPCG(20261128, 1))
	for i := 0; i < 6; i++ {
		shapes = append(shapes, shape{r.IntN(600), 1 + r.IntN(5), r.IntN(3000), r.IntN(800)})
	}
	for i, sh := range shapes {
		t.Run(fmt.Sprintf("%d_failures%d_checks%d_detail%d_setups%d", i, sh.failures, sh.checks, sh.detail, sh.extraSetups), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			var rep merge.Report
			if err := json.Unmarshal(baseJSON, &rep); err != nil {
				t.Fatal(err)
			}
			for j := 0; j < sh.failures; j++ {
				// A cell's edges are trimmed by every Markdown reader, so names have none.
				c := merge.Case{Name: fmt.Sprintf("vllm-m%d-kv_c1%s", j, strings.TrimSpace(flat(randomText(r, 20)))), Part: "vLLM"}
				if r.IntN(10) == 0 {
					c.NotRun = true
				} else {
					for k := 0; k < sh.checks; k++ {
						detail := randomText(r, sh.detail)
						if r.IntN(4) == 0 {
							detail = strings.Repeat("漢", sh.detail) // exactly at the boundary
						}
						c.Checks = append(c.Checks, collect.Check{Name: fmt.Sprintf("check_%d", k), OK: false, Detail: detail})
					}
				}
				rep.Cases = append(rep.Cases, c)
			}
			for j := 0; j < sh.extraSetups; j++ {
				cs := rep.Setup.Cases[j%len(rep.Setup.Cases)]
				cs.Name = fmt.Sprintf("%s-x%d", cs.Name, j)
				cs.ExtraArgs = append(append([]string{}, cs.ExtraArgs...), "--note", randomText(r, 60))
				rep.Setup.Cases = append(rep.Setup.Cases, cs)
			}
			opts := baseOpts
			if i%3 == 1 {
				opts.PR = 7
			}
			docs, err := render.Render(&rep, opts)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			checkBudgets(t, docs)
			checkHeadline(t, docs, opts)
			checkDoc(t, docCheck{name: "comment", doc: docs.Comment, details: opts.PR > 0, rep: &rep})
			if docs.Section != "" {
				checkDoc(t, docCheck{name: "section", doc: docs.Section, setup: rep.Setup})
			}
		})
	}
}

// recorder is a tb that keeps the complaints instead of failing.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatal(a ...any) { r.errs = append(r.errs, fmt.Sprint(a...)) }

// TestWellFormedCatches proves the checks can fail: each bad document must
// draw a complaint that names its fault, and the good one none.
func TestWellFormedCatches(t *testing.T) {
	rep := &merge.Report{Cases: []merge.Case{
		{Name: "vllm-setup", OK: true, Part: "vLLM"},
		{Name: "sglang-a-kv_c1", OK: false, Part: "SGLang", Checks: []collect.Check{
			{Name: "gen_ok", OK: false, Detail: "3/9 | failed @bob\nnext"},
			{Name: "shm_removed", OK: true},
			{Name: "apc_ok", OK: false, Detail: strings.Repeat("漢", 301)},
		}},
		{Name: "sglang-setup", OK: false, Part: "SGLang"},
		{Name: "sglang-b-native", NotRun: true, Part: "SGLang"},
	}}
	cut := strings.Repeat("漢", 299) + "…"
	good := "<!-- ci-report:comment run=1 attempt=1 profile=nightly -->\n### Nightly correctness · 2026-11-28 · FAIL\n\n" +
		"| case | failed checks | class |\n|---|---|---|\n" +
		"| sglang-a-kv\\_c1 | `gen_ok` (3/9 \\| failed @\u200dbob next); `apc_ok` (" + cut + ") | unclassified |\n" +
		"| sglang-setup (SGLang) | no failed check recorded | unclassified |\n" +
		"| sglang-b-native | not run | unclassified |\n\nSee ```` ``` ```` there.\n"
	tc := []struct {
		name    string
		doc     string
		details bool
		want    string // a fragment of the complaint; "" for none
	}{
		{"good", good, false, ""},
		{"extra cell", strings.Replace(good, "| not run |", "| not | run |", 1), false, "4 cells, header has 3"},
		{"unescaped pipe", strings.Replace(good, `3/9 \| failed`, `3/9 | failed`, 1), false, "4 cells, header has 3"},
		{"missing row", strings.Replace(good, "| sglang-b-native | not run | unclassified |\n", "", 1), false, "and 1 more"},
		{"detail changed", strings.Replace(good, "next)", "nxt)", 1), false, "does not read back"},
		{"cut too long", strings.Replace(good, cut, strings.Repeat("漢", 300)+"…", 1), false, "does not read back"},
		{"check name not code", strings.Replace(good, "`gen_ok`", "gen_ok", 1), false, "not in a code span"},
		{"emphasis from run text", strings.Replace(good, "3/9 \\| failed", "3/9 \\| *failed*", 1), false, "does not read back"},
		{"mention", strings.Replace(good, "@\u200dbob", "@bob", 1), false, "mention survives"},
		{"entity mention", strings.Replace(good, "@\u200dbob", "&#64;bob", 1), false, "mention survives"},
		{"issue reference", strings.Replace(good, "See", "See #12", 1), false, "issue reference survives"},
		{"GH reference", strings.Replace(good, "See", "See GH-12", 1), false, "issue reference survives"},
		{"issue URL", strings.Replace(good, "See", "See https://github.com/o/r/issues/12", 1), false, "run text became a link"},
		{"www link", strings.Replace(good, "See", "See www.github.com/o/r/pull/3", 1), false, "run text became a link"},
		{"mail address", strings.Replace(good, "See", "See a@b.io", 1), false, ""},
		{"escape", strings.Replace(good, "next)", "\x1b[2Jnext)", 1), false, "control or bidirectional character U+001B"},
		{"bidi override", strings.Replace(good, "next)", "\u202enext)", 1), false, "control or bidirectional character U+202E"},
		{"raw html block", good + "\n<img src=x>\n", false, "raw HTML block"},
		{"inline html", strings.Replace(good, "See", "See <b>x</b>", 1), false, "inline raw HTML"},
		{"details not allowed", good + "\n<details><summary>Setup of every case</summary>\n\nx\n\n</details>\n", false, "raw HTML block"},
		{"details allowed", good + "\n<details><summary>Setup of every case</summary>\n\nx\n\n</details>\n", true, ""},
		{"details not closed", good + "\n<details><summary>Setup of every case</summary>\n\nx\n", true, "not closed"},
		{"details swallow a line", good + "\n<details><summary>Setup of every case</summary>\n\nx\n\n</details>\nLogs: [run](http://x)\n", true, "raw HTML block"},
		{"fence not closed", good + "\n```\ncode\n", false, "not closed"},
		{"bad marker", strings.Replace(good, "profile=nightly", "profile=Night ly", 1), false, "raw HTML block"},
	}
	for _, c := range tc {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{}
			checkDoc(r, docCheck{name: c.name, doc: c.doc, details: c.details, rep: rep})
			all := strings.Join(r.errs, "\n")
			if c.want == "" && len(r.errs) > 0 {
				t.Errorf("complaints about a good document:\n%s", all)
			}
			if c.want != "" && !strings.Contains(all, c.want) {
				t.Errorf("no complaint containing %q; got:\n%s", c.want, all)
			}
		})
	}
}

// TestWellFormedCatchesCasesTable proves the cases-table check can fail.
func TestWellFormedCatchesCasesTable(t *testing.T) {
	setup := &collect.Setup{Cases: []collect.CaseSetup{
		{Name: "vllm-a-kv_c1", ModelArgs: []string{"--dtype", "bfloat16", "--max-num-seqs", "32", "--trust-remote-code"}, ExtraArgs: []string{"--max-num-seqs", "128"}},
		{Name: "vllm-a-native", ExtraArgs: []string{"--note", "a|b"}},
	}}
	head := "| case | model | KV cache | TP | KV dtype | case flags |\n|---|---|---|---|---|---|\n"
	good := head + "| vllm-a-kv\\_c1 | m | native | 1 | model dtype | `--dtype bfloat16 --trust-remote-code --max-num-seqs 128` |\n" +
		"| vllm-a-native | m | native | 1 | model dtype | `--note a\\|b` |\n"
	tc := []struct{ name, doc, want string }{
		{"good", good, ""},
		{"flag kept twice", strings.Replace(good, "--trust-remote-code --max-num-seqs 128", "--max-num-seqs 32 --trust-remote-code --max-num-seqs 128", 1), "case flags of vllm-a-kv_c1"},
		{"flags not code", strings.Replace(good, "`--note a\\|b`", "--note a\\|b", 1), "case flags of vllm-a-native"},
		{"row missing", strings.Replace(good, "| vllm-a-native | m | native | 1 | model dtype | `--note a\\|b` |\n", "", 1), "1 rows, setup.json 2 cases"},
	}
	for _, c := range tc {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{}
			checkDoc(r, docCheck{name: c.name, doc: c.doc, setup: setup})
			all := strings.Join(r.errs, "\n")
			if c.want == "" && all != "" || c.want != "" && !strings.Contains(all, c.want) {
				t.Errorf("complaints %q, want one containing %q", all, c.want)
			}
		})
	}
}
