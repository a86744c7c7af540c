package render

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// Known upstream issues (docs/render.md §10); merge classifies the report
// with them (Report.WithKnownIssues).
const (
	maxKnownRows  = 30 // known failures a comment lists one row each
	maxKnownLines = 20 // entries a comment or section lists one line each
	// knownURLMax bounds an entry's URL: a link cannot be cut.
	knownURLMax  = 300
	knownGlobCut = 100 // code points of an entry's globs where shown
	knownNoteCut = 300 // and of its note
)

// ParseKnownIssues reads a known-issues file: a JSON array of {check, cases,
// url, note?}, every entry validated; an error names the file and the entry's
// index (from 0).
func ParseKnownIssues(file string, data []byte) ([]merge.KnownIssue, error) {
	if err := collect.RepeatedKey(data); err != nil {
		return nil, fmt.Errorf("known issues %s: %w", file, err)
	}
	var raw []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("known issues %s: want a JSON array of {check, cases, url, note}: %v", file, collect.JSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("known issues %s: more than one JSON value", file)
	}
	if err := bounds.List("known issues "+file, len(raw), bounds.MaxList); err != nil {
		return nil, err
	}
	out := make([]merge.KnownIssue, 0, len(raw))
	for i, r := range raw {
		var k merge.KnownIssue
		d := json.NewDecoder(bytes.NewReader(r))
		d.DisallowUnknownFields()
		if err := d.Decode(&k); err != nil {
			return nil, fmt.Errorf("known issues %s: entry %d: %v", file, i, collect.JSONError(err))
		}
		if err := cmp.Or(bounds.Check(k), validateKnownIssue(k)); err != nil {
			return nil, fmt.Errorf("known issues %s: entry %d: %v", file, i, err)
		}
		out = append(out, k)
	}
	return out, nil
}

// everyCheck and everyCase are a name of each family of checks and kind of
// case the runner records (docs/runner.md §5.8): a glob matching all of them
// would hide any regression, which no known issue may.
var (
	everyCheck = []string{"server_ready", "kvcached_active", "gen_seq_ok", "apc_0_tokens_equal", "server_alive_after_load",
		"no_error_signatures", "shm_removed", "socket_dirs_removed", "clean_exit_on_signal", "no_gpu_process_left",
		"elastic-vllm-qwen05b-kv_c1_alive", "a_requests_ok", "b_reused_a_memory", "limit_set", "limit_held_under_load",
		"priority_set", "l_released_for_h", "h_reused_l_memory"}
	everyCase = []string{"vllm-qwen05b-kv_c1", "sglang-qwen35_4b-native-tp2", "vllm-setup",
		"elastic-vllm-qwen05b+sglang-qwen35_4b", "limit-vllm-qwen05b", "priority-vllm-qwen05b+vllm-qwen35_4b"}
)

// validateKnownIssue checks one entry's globs and URL.
func validateKnownIssue(k merge.KnownIssue) error {
	for _, g := range []struct {
		key, v, what string
		every        []string
	}{{"check", k.Check, "check", everyCheck}, {"cases", k.Cases, "case", everyCase}} {
		if g.v == "" {
			return fmt.Errorf("%s is missing or empty", g.key)
		}
		if _, err := path.Match(g.v, ""); err != nil {
			return fmt.Errorf("%s %s is not a valid glob: %v", g.key, bounds.Quote(g.v), err)
		}
		if !slices.ContainsFunc(g.every, func(n string) bool { return !globMatch(g.v, n) }) { // it matches every one
			return fmt.Errorf("%s %s matches every %s (%s, %s, ...): an entry that wide would hide any regression; name the %ss its issue fails",
				g.key, bounds.Quote(g.v), g.what, g.every[0], g.every[len(g.every)-1], g.what)
		}
	}
	switch {
	case k.URL == "":
		return errors.New("url is missing or empty")
	case !strings.HasPrefix(k.URL, "https://") || !SafeURL(k.URL):
		return fmt.Errorf("url %s: want a plain https URL", bounds.Quote(k.URL))
	case len(k.URL) > knownURLMax:
		return fmt.Errorf("url is %d bytes long, over %d", len(k.URL), knownURLMax)
	}
	return nil
}

// issueRE is a GitHub issue or pull request URL, shown as `<repo>#<n>`.
var issueRE = regexp.MustCompile(`^https://github\.com/[A-Za-z0-9_.-]+/([A-Za-z0-9_.-]+)/(?:issues|pull)/([0-9]+)$`)

// knownLink is `[kvcached#477](url)` for a GitHub issue or pull request, else
// `[issue](url)`; the URL was validated.
func knownLink(url string) string {
	if m := issueRE.FindStringSubmatch(url); m != nil {
		return "[" + m[1] + "#" + m[2] + "](" + url + ")"
	}
	return "[issue](" + url + ")"
}

// knownOnly are the cases that failed only on known issues.
func (r *renderer) knownOnly() []*merge.Case {
	var out []*merge.Case
	for i := range r.rep.Cases {
		if c := &r.rep.Cases[i]; c.KnownFailed() && !c.Failed() {
			out = append(out, c)
		}
	}
	return out
}

// knownBlock is the comment's known upstream issues: what they covered, a
// table of the known failed checks of knownOnly, then a line per entry that
// no longer reproduces; "" without known issues.
func (r *renderer) knownBlock(w *writer, p plan) string {
	if len(r.rep.KnownIssues) == 0 {
		return ""
	}
	blocks := appendSome(nil, r.knownCovered(w))
	var rows [][]string
	checks := 0
	for _, c := range r.knownOnly() {
		for _, k := range c.Known {
			ch := c.Checks[k.Check]
			if ch.OK {
				continue
			}
			checks++
			if len(rows) == maxKnownRows {
				continue
			}
			name, check := text.Cut(c.Label(), p.cut(squeezeName)), text.Cut(ch.Name, p.cut(100))
			ki := r.rep.KnownIssues[k.Issue]
			issue := w.t("known_issue_cell", map[string]any{"Link": knownLink(ki.URL), "Inferred": ki.Inferred})
			rows = append(rows, []string{text.Plain(name), text.CodeCell(check), plainCut(checkDetail(&ch), p.detail), issue})
		}
	}
	if checks > 0 {
		table := w.mdTable([]string{"case", "check", "detail", "issue"}, rows)
		if more := checks - len(rows); more > 0 {
			table += "\n\n" + w.t("known_more", more)
		}
		blocks = append(blocks, w.t("known_block", map[string]any{"Checks": checks, "Cases": len(r.knownOnly()), "Table": table}))
	}
	stays := func(st merge.KnownStatus) bool { return st.Reproduces() || st.Passed == 0 }
	if gone := slices.DeleteFunc(r.rep.KnownStatuses(), stays); len(gone) > 0 {
		line := func(st merge.KnownStatus) string { return w.t("known_gone", r.knownEntry(st.Issue, st.Passed)) }
		lines := capList(gone, maxKnownLines, line, func(n int) string { return w.t("known_gone_more", n) })
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
	return strings.Join(blocks, "\n\n")
}

// knownCovered says how many failed checks the known issues covered, and which
// entries with how many each, or that they covered none.
func (r *renderer) knownCovered(w *writer) string {
	total := 0
	var entries []string
	for _, st := range r.rep.KnownStatuses() {
		if st.Failed > 0 {
			total += st.Failed
			entries = append(entries, w.t("known_covered_entry", r.knownEntry(st.Issue, st.Failed)))
		}
	}
	more := max(0, len(entries)-maxKnownLines)
	list := strings.Join(entries[:len(entries)-more], "; ")
	return w.t("known_covered", map[string]any{"Checks": total, "Entries": list, "More": more})
}

// knownEntry is the template data describing one entry.
func (r *renderer) knownEntry(k merge.KnownIssue, n int) map[string]any {
	return map[string]any{
		"Link":     knownLink(k.URL),
		"Check":    text.Code(text.Cut(k.Check, knownGlobCut)),
		"Cases":    text.Code(text.Cut(k.Cases, knownGlobCut)),
		"Note":     plainCut(k.Note, knownNoteCut),
		"N":        n,
		"Inferred": k.Inferred,
	}
}

// knownSection lists the known issues for the section and what each did in
// this run; "" without any.
func (r *renderer) knownSection(w *writer) string {
	statuses := r.rep.KnownStatuses()
	if len(statuses) == 0 {
		return ""
	}
	lines := capList(statuses, maxKnownLines, func(st merge.KnownStatus) string {
		e := r.knownEntry(st.Issue, 0)
		switch {
		case st.Reproduces():
			e["Status"] = w.t("known_status_failed", st.Failed)
		case st.Passed > 0:
			e["Status"] = w.t("known_status_gone", nil)
		default:
			e["Status"] = w.t("known_status_unused", nil)
		}
		return w.t("known_section_entry", e)
	}, func(n int) string { return w.t("known_section_more", n) })
	return w.t("known_section_head", nil) + "\n" + strings.Join(lines, "\n")
}
