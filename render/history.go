package render

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/marker"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
)

// History across runs: docs/render.md §11; the digest: docs/formats.md §9.
const (
	// HistoryRuns is how many runs a history covers, this one included.
	HistoryRuns = 8
	// DigestVersion is the digest format written and the only one read.
	DigestVersion = 1
	// MaxDigestChars bounds a digest's JSON, written or read back.
	MaxDigestChars = 8000
	// MaxHistoryFile bounds a --history file.
	MaxHistoryFile = 16 << 20

	digestNameCut   = 200 // code points of a case label in a digest
	digestCheckCut  = 100 // code points of a failed check's name
	maxDigestChecks = 8   // failed checks named per case; the fingerprint covers all
	fingerprintLen  = 12  // hex digits of the fingerprint
	maxHistoryCut   = 20  // cases named on the fixed line and rows of the changes table
)

// Digest case statuses: only cases that did not pass cleanly are listed.
const (
	DigestFailed = "fail"
	DigestNotRun = "notrun"
	DigestFlaky  = "flaky" // passed on a rerun (collect.CaseFlaky)
)

// HistoryRun is the digest of one run (docs/formats.md §9). A case it does
// not list passed (or was skipped), unless Partial says the list was cut to
// fit MaxDigestChars; then an unlisted case is unknown.
type HistoryRun struct {
	V       int    `json:"v"`
	Profile string `json:"profile"`
	Suite   string `json:"suite,omitempty"` // absent for the default suite
	Run     string `json:"run"`
	Attempt string `json:"attempt"`
	Date    string `json:"date,omitempty"`
	// SHA is the commit the run tested (lowercase hex, 7 to 64 digits).
	SHA     string        `json:"sha,omitempty"`
	Total   int           `json:"total"`
	Partial bool          `json:"partial,omitempty"`
	Cases   []HistoryCase `json:"cases,omitempty"`
	// Flaky are the cases that passed on a rerun, in a list of their own so
	// that an older binary reads them as passed (docs/formats.md §9).
	Flaky []HistoryCase `json:"fl,omitempty"`
	// Margins are the passing checks' margins below digestMarginBelow,
	// closest first, as many as fit after the cases.
	Margins []HistoryMargin `json:"m,omitempty"`
	// Metrics are the known metric values of the run's cases, as many as
	// fit after the cases and margins.
	Metrics []HistoryMetric `json:"x,omitempty"`
}

// HistoryCase is one case of a digest that failed or did not run.
type HistoryCase struct {
	Name   string `json:"n"`
	Status string `json:"s"`
	Class  string `json:"c,omitempty"` // failure class, where the report has one
	// Unexplained: its class is product by the runner's default alone
	// (collect.Unexplained).
	Unexplained bool     `json:"u,omitempty"`
	Failed      []string `json:"f,omitempty"` // the first maxDigestChecks failed checks
	// Fingerprint hashes the failed checks with their normalised details.
	Fingerprint string `json:"h,omitempty"`
}

var (
	digitsRE      = regexp.MustCompile(`^[0-9]{1,19}$`)
	classRE       = regexp.MustCompile(`^[a-z]{0,16}$`)
	fingerprintRE = regexp.MustCompile(`^[0-9a-f]{12}$`)
	digestSHARE   = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
)

// fingerprint hashes a case's failure: each failed check's name and
// normalised detail (cut to detailCut code points, which bounds the work).
func fingerprint(c *merge.Case) string {
	return hashFailures(c.NotRun, c.Checks, nil, nil)
}

// hashFailures is the fingerprint of checks, each detail cut and, unless own
// and names are both nil, with those names taken out (appendWithoutNames).
func hashFailures(notRun bool, checks []collect.Check, own []string, names map[string]bool) string {
	h := sha256.New()
	if notRun {
		io.WriteString(h, "not run")
	}
	var buf, plain []byte
	for _, ch := range checks {
		if !ch.OK {
			buf = append(buf[:0], ch.Name...)
			buf = append(buf, '\x1f')
			detail := text.Cut(ch.Detail, detailCut)
			if own != nil || names != nil {
				plain = appendWithoutNames(plain[:0], detail, own, names)
				detail = string(plain)
			}
			buf = appendNormalised(buf, detail)
			buf = append(buf, '\x1e')
			h.Write(buf)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:fingerprintLen]
}

// appendNormalised appends s normalised to dst, so that the details of the
// same failure in two runs are equal. One pass over s, with these rules,
// each applied to what the one before left:
//
//   - paths and URLs: each run of bytes other than ASCII white space and
//     ()'",; that holds a '/' becomes <path>;
//   - long hex: each word (a run of ASCII letters, digits and '_') that is
//     0x and 8 or more hex digits, or 8 or more hex digits, becomes <hex>;
//   - any number left, [0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?, becomes <n>.
//
// FuzzNormaliseDetail holds this pass to the three regular expressions.
func appendNormalised(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		if isPathStop(s[i]) {
			dst = append(dst, s[i])
			i++
			continue
		}
		end := i
		for end < len(s) && !isPathStop(s[end]) {
			end++
		}
		if strings.IndexByte(s[i:end], '/') >= 0 {
			dst = append(dst, "<path>"...)
		} else {
			dst = appendRun(dst, s[i:end])
		}
		i = end
	}
	return dst
}

// isPathStop is a byte that ends a path: ASCII white space (\s) and ()'",;.
func isPathStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r', '(', ')', '\'', '"', ',', ';':
		return true
	}
	return false
}

// isWordByte is a byte of a word (\w in Go's regular expressions).
func isWordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// hexWordEnd is the end of the long hex word at run[i], else -1.
func hexWordEnd(run string, i int) int {
	end := i
	for end < len(run) && isWordByte(run[end]) {
		end++
	}
	w := run[i:end]
	if len(w) >= 10 && w[0] == '0' && w[1] == 'x' && allHex(w[2:]) || len(w) >= 8 && allHex(w) {
		return end
	}
	return -1
}

func allHex(w string) bool {
	for k := 0; k < len(w); k++ {
		if c := w[k] | 0x20; !isDigit(w[k]) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// appendRun appends run, bytes without a path stop or '/', with its long
// hex words and then its numbers replaced.
func appendRun(dst []byte, run string) []byte {
	// hexAt is the end of the long hex word that starts at run[k], or -1:
	// a number never reads into one, as the hex rule came first.
	hexAt := func(k int) int {
		if k < len(run) && isWordByte(run[k]) && (k == 0 || !isWordByte(run[k-1])) {
			return hexWordEnd(run, k)
		}
		return -1
	}
	digits := func(k int) int {
		for k < len(run) && isDigit(run[k]) {
			k++
		}
		return k
	}
	for i := 0; i < len(run); {
		if end := hexAt(i); end >= 0 {
			dst = append(dst, "<hex>"...)
			i = end
			continue
		}
		if !isDigit(run[i]) {
			dst = append(dst, run[i])
			i++
			continue
		}
		j := digits(i)
		if j+1 < len(run) && run[j] == '.' && isDigit(run[j+1]) && hexAt(j+1) < 0 {
			j = digits(j + 1)
		}
		if j+1 < len(run) && (run[j] == 'e' || run[j] == 'E') {
			k := j + 1
			if run[k] == '+' || run[k] == '-' {
				k++
			}
			if k < len(run) && isDigit(run[k]) && hexAt(k) < 0 {
				j = digits(k)
			}
		}
		dst = append(dst, "<n>"...)
		i = j
	}
	return dst
}

// historyKey is how a case is named in digests: its label, cut.
func historyKey(c *merge.Case) string { return text.Cut(c.Label(), digestNameCut) }

// digest is the hidden digest line of this run, "" without a run id (no
// later post could key it to a run).
func (r *renderer) digest() string {
	if r.opts.RunID == "" {
		return ""
	}
	run := HistoryRun{V: DigestVersion, Profile: r.profile, Suite: r.cfg.Suite.Name, Run: r.opts.RunID,
		Attempt: cmp.Or(r.opts.RunAttempt, "1"), Date: r.opts.Date, SHA: digestSHA(r.sha()), Total: len(r.rep.Cases)}
	head, _ := json.Marshal(run)
	used := len(head) + len(`,"cases":[]`) + len(`,"fl":[]`) + len(`,"partial":true`) + len(`,"m":[]`) + len(`,"x":[]`)
	seen := map[string]bool{}
	for i := range r.rep.Cases {
		c := &r.rep.Cases[i]
		key := historyKey(c)
		if c.Evidence || key == "" || seen[key] {
			// An arm expected to fail failed as the run was to show
			// (docs/render.md §12.4); a repeated or empty label could not
			// read back (ParseDigest).
			continue
		}
		seen[key] = true
		hc, list := HistoryCase{Name: key, Status: DigestFailed}, &run.Cases
		switch {
		case c.Flaky():
			hc.Status, list = DigestFlaky, &run.Flaky
		case c.NotRun:
			hc.Status = DigestNotRun
		case !c.Failed():
			continue
		}
		if hc.Status != DigestFlaky {
			if class := c.Class; class != collect.ClassUnclassified && classRE.MatchString(class) { // unclassified: the part had no class
				hc.Class, hc.Unexplained = class, collect.Unexplained(class, c.ClassBy)
			}
			for i := 0; hc.Status == DigestFailed && i < len(c.Checks); i++ {
				if ch := c.Checks[i]; !ch.OK && len(hc.Failed) < maxDigestChecks {
					// An unnamed check as the table names it.
					hc.Failed = append(hc.Failed, cmp.Or(text.Cut(ch.Name, digestCheckCut), unnamedCheck))
				}
			}
			hc.Fingerprint = fingerprint(c)
		}
		n := digestCost(hc)
		if used+n > MaxDigestChars {
			run.Partial = true
			break
		}
		used += n
		*list = append(*list, hc)
	}
	// Margins take what the cases leave, metrics what is left; a metric
	// whose every arm and level does not fit is left out whole.
	run.Margins = fitDigest(r.digestMargins(), &used)
	all := r.digestMetrics()
	run.Metrics = fitDigest(all, &used)
	for n := len(run.Metrics); n > 0 && n < len(all) && all[n].Case == all[n-1].Case && all[n].Name == all[n-1].Name; n-- {
		run.Metrics = run.Metrics[:n-1]
	}
	b, _ := json.Marshal(run)
	return marker.Digest(string(asciiJSON(b)))
}

// asciiJSON escapes every non-ASCII rune of encoded JSON as \uXXXX (they
// only occur in strings), and '@' and '#' (never a mention or an issue
// reference), so that no bidirectional or invisible character hides in a
// digest, and its length in bytes is its length in code points.
// encoding/json already escapes <, > and &, so no `-->` ends the comment.
func asciiJSON(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		i += size
		switch {
		case r == '@' || r == '#':
			out = fmt.Appendf(out, `\u%04x`, r)
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// ParseDigest decodes and validates one untrusted digest's JSON: every
// field is checked and bounded, and a bad one is an error naming it.
func ParseDigest(s string) (HistoryRun, error) {
	var h HistoryRun
	if len(s) > MaxDigestChars {
		return h, fmt.Errorf("digest of %d bytes: at most %d", len(s), MaxDigestChars)
	}
	// encoding/json reads a repeated key last-wins: a digest with one is
	// ambiguous, so not read.
	if err := collect.RepeatedKey([]byte(s)); err != nil {
		return HistoryRun{}, fmt.Errorf("digest: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&h); err != nil {
		return HistoryRun{}, fmt.Errorf("digest: %v", err)
	}
	if dec.More() {
		return HistoryRun{}, errors.New("digest: text after the JSON object")
	}
	if err := h.validate(); err != nil {
		return HistoryRun{}, fmt.Errorf("digest: %v", err)
	}
	return h, nil
}

func (h *HistoryRun) validate() error {
	switch {
	case h.V != DigestVersion:
		return fmt.Errorf("v %d: want %d", h.V, DigestVersion)
	case !ValidProfile(h.Profile):
		return fmt.Errorf("profile %q: want %s", text.Cut(h.Profile, 40), marker.Name)
	case h.Suite != "" && !marker.ValidName(h.Suite):
		return fmt.Errorf("suite %q: want %s", text.Cut(h.Suite, 40), marker.Name)
	case !digitsRE.MatchString(h.Run):
		return fmt.Errorf("run %q: want digits", text.Cut(h.Run, 40))
	case !digitsRE.MatchString(h.Attempt):
		return fmt.Errorf("attempt %q: want digits", text.Cut(h.Attempt, 40))
	case h.Date != "" && !dateRE.MatchString(h.Date):
		return fmt.Errorf("date %q: want YYYY-MM-DD", text.Cut(h.Date, 40))
	case h.SHA != "" && !digestSHARE.MatchString(h.SHA):
		return fmt.Errorf("sha %q: want 7 to 64 lowercase hex digits", text.Cut(h.SHA, 70))
	case h.Total < len(h.Cases)+len(h.Flaky):
		return fmt.Errorf("total %d: fewer than the %d cases listed", h.Total, len(h.Cases)+len(h.Flaky))
	}
	seen := make(map[string]bool, len(h.Cases)+len(h.Flaky))
	for i, c := range append(h.Cases[:len(h.Cases):len(h.Cases)], h.Flaky...) {
		where, flaky := fmt.Sprintf("case %d", i), i >= len(h.Cases)
		if flaky {
			where = fmt.Sprintf("flaky case %d", i-len(h.Cases))
		}
		switch {
		case !validDigestName(c.Name, digestNameCut):
			return fmt.Errorf("%s: name: want 1 to %d code points of UTF-8", where, digestNameCut)
		case seen[c.Name]:
			return fmt.Errorf("%s: %q listed twice", where, text.Cut(c.Name, 40))
		case flaky && c.Status != DigestFlaky:
			return fmt.Errorf("%s: status %q: want %s", where, text.Cut(c.Status, 20), DigestFlaky)
		case !flaky && c.Status != DigestFailed && c.Status != DigestNotRun:
			return fmt.Errorf("%s: status %q: want %s or %s", where, text.Cut(c.Status, 20), DigestFailed, DigestNotRun)
		case !classRE.MatchString(c.Class):
			return fmt.Errorf("%s: class %q: want up to 16 letters a-z", where, text.Cut(c.Class, 20))
		case len(c.Failed) > maxDigestChecks:
			return fmt.Errorf("%s: %d failed checks: at most %d", where, len(c.Failed), maxDigestChecks)
		case c.Fingerprint != "" && !fingerprintRE.MatchString(c.Fingerprint):
			return fmt.Errorf("%s: fingerprint %q: want %d hex digits", where, text.Cut(c.Fingerprint, 20), fingerprintLen)
		case slices.ContainsFunc(c.Failed, func(f string) bool { return !validDigestName(f, digestCheckCut) }):
			return fmt.Errorf("%s: failed check: want 1 to %d code points of UTF-8", where, digestCheckCut)
		}
		seen[c.Name] = true
	}
	return cmp.Or(validateMargins(h.Margins), validateMetrics(h.Metrics))
}

// validDigestName: a name in a digest is 1 to n code points of UTF-8.
func validDigestName(s string, n int) bool {
	return s != "" && utf8.ValidString(s) && runeCount(s) <= n
}

// ReadHistory reads a history file (`render --history`, written by `post
// --save-history`): one digest's JSON a line, blank lines ignored; a bad
// line is an error naming it.
func ReadHistory(r io.Reader) ([]HistoryRun, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxHistoryFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxHistoryFile {
		return nil, fmt.Errorf("over %d bytes", MaxHistoryFile)
	}
	var out []HistoryRun
	for n, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		h, err := ParseDigest(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		out = append(out, h)
	}
	return out, nil
}

// WriteHistory writes runs as a history file, one digest a line.
func WriteHistory(w io.Writer, runs []HistoryRun) error {
	for _, h := range runs {
		b, err := json.Marshal(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(asciiJSON(b), '\n')); err != nil {
			return err
		}
	}
	return nil
}

// SelectHistory is the history a render of run runID of a suite's profile
// shows: the digests of that suite ("" the default suite) and profile,
// without any attempt of runID itself, one per run id (the highest attempt;
// of equal ones the later), ordered by run id and cut to the HistoryRuns-1
// newest. post and render --history both go through it.
func SelectHistory(runs []HistoryRun, suite, profile, runID string) []HistoryRun {
	byRun := map[string]int{}
	var out []HistoryRun
	for _, h := range runs {
		key := strings.TrimLeft(h.Run, "0")
		if h.Suite != suite || h.Profile != profile || (runID != "" && key == strings.TrimLeft(runID, "0")) {
			continue
		}
		if i, ok := byRun[key]; ok {
			if cmpDigits(h.Attempt, out[i].Attempt) >= 0 {
				out[i] = h
			}
			continue
		}
		byRun[key] = len(out)
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b HistoryRun) int { return cmpDigits(a.Run, b.Run) })
	if n := len(out) - (HistoryRuns - 1); n > 0 {
		out = out[n:]
	}
	return out
}

// cmpDigits compares two strings of digits as numbers, whatever their length.
func cmpDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// runState is a case's state in one run.
type runState struct {
	known bool
	bad   bool // failed or did not run
	infra bool // failed with class infra: ignored by the history (docs/render.md §11)
	flaky bool // passed on a rerun: each such run is a flip of its own
	fp    string
	date  string
	sym   string // the changes table's symbol
}

// Symbols of the changes table (templates/section.tmpl's history_legend).
const (
	symPassed    = "✓"
	symFailed    = "✗"
	symFailedNew = "✗*" // failed differently from its failure before
	symNotRun    = "○"
	symInfra     = "⚠" // failed on the machine (class infra): not counted
	symFlaky     = "~" // passed on a rerun
	// failed, product by the default alone (collect.Unexplained)
	symUnexplained = "✗?"
	symUnknown     = "·"
)

// historyIndex holds, for each earlier run, its listed cases by name.
type historyIndex struct {
	runs  []HistoryRun
	cases []map[string]*HistoryCase
}

func newHistoryIndex(runs []HistoryRun) *historyIndex {
	ix := &historyIndex{runs: runs}
	for i := range runs {
		m := make(map[string]*HistoryCase, len(runs[i].Cases)+len(runs[i].Flaky))
		for _, list := range [][]HistoryCase{runs[i].Cases, runs[i].Flaky} {
			for j := range list {
				m[list[j].Name] = &list[j]
			}
		}
		ix.cases = append(ix.cases, m)
	}
	return ix
}

// states is the case's state in each earlier run, oldest first, then this one.
func (r *renderer) states(c *merge.Case) []runState {
	key := historyKey(c)
	out := make([]runState, 0, len(r.hist.runs)+1)
	for i, h := range r.hist.runs {
		hc, ok := r.hist.cases[i][key]
		switch {
		case ok && hc.Status == DigestFlaky:
			out = append(out, runState{known: true, flaky: true, date: h.Date, sym: symFlaky})
		case ok:
			out = append(out, badState(hc.Status == DigestNotRun, hc.Class, hc.Unexplained, hc.Fingerprint, h.Date))
		case !h.Partial && h.Total > 0:
			out = append(out, runState{known: true, date: h.Date, sym: symPassed})
		default:
			out = append(out, runState{date: h.Date, sym: symUnknown})
		}
	}
	switch {
	case c.NotRun || c.Failed():
		unexplained := collect.Unexplained(c.Class, c.ClassBy)
		return append(out, badState(c.NotRun, c.Class, unexplained, fingerprint(c), r.opts.Date))
	case c.Flaky():
		return append(out, runState{known: true, flaky: true, date: r.opts.Date, sym: symFlaky})
	}
	return append(out, runState{known: true, date: r.opts.Date, sym: symPassed})
}

// badState is the state of a run the case failed or did not run in.
func badState(notRun bool, class string, unexplained bool, fp, date string) runState {
	st := runState{known: true, bad: true, fp: fp, date: date, sym: symFailed}
	switch {
	case notRun:
		st.sym = symNotRun
	case class == collect.ClassInfra:
		st.infra, st.sym = true, symInfra
	case unexplained:
		st.sym = symUnexplained
	}
	return st
}

// since is the failed-cases table's since cell of a failed or not-run case
// (docs/render.md §11; sinceKind).
func (r *renderer) since(w *writer, c *merge.Case) string {
	k := r.sinceKind(r.states(c))
	return w.t(k.kind, k.data)
}

// Where a failure stands in its history: its since cell's template.
const (
	sinceNew      = "since_new"
	sinceNoRecord = "since_unknown"
	sinceInfra    = "since_infra"
	sinceFlaky    = "since_flaky"
	sinceStreak   = "since_runs"
)

// sinceState is a failure's standing and the figures its since cell shows.
type sinceState struct {
	kind string
	data any
}

// sinceKind is where the failure of this run (the last of states) stands,
// by the rules of docs/render.md §11.
func (r *renderer) sinceKind(states []runState) sinceState {
	if states[len(states)-1].infra {
		return sinceState{kind: sinceInfra}
	}
	var seq []runState // the states counted: known, not an infra failure
	for _, st := range states {
		if st.known && !st.infra {
			seq = append(seq, st)
		}
	}
	flips, streak := 0, 0
	for i := range seq {
		if i > 0 && seq[i].bad != seq[i-1].bad || seq[i].flaky {
			flips++
		}
		if seq[i].bad {
			streak++
		} else {
			streak = 0
		}
	}
	switch {
	case len(seq) == 1:
		return sinceState{kind: sinceNoRecord}
	case flips >= 2:
		return sinceState{sinceFlaky, map[string]int{"Flips": flips, "N": len(seq)}}
	case streak >= 2:
		return sinceState{sinceStreak, map[string]any{"N": streak, "Date": seq[len(seq)-streak].date}}
	}
	return sinceState{kind: sinceNew}
}

// fixedLine is `Fixed since the previous run: <cases>.`: the cases that
// failed (not with class infra) or did not run in the newest earlier run
// and passed (or were skipped) in this one; "" when there are none.
func (r *renderer) fixedLine(w *writer, p plan) string {
	if r.hist == nil {
		return ""
	}
	prev := r.hist.cases[len(r.hist.cases)-1]
	nameCut := squeezeCut(p, digestNameCut)
	var names []string
	more := 0
	for i := range r.rep.Cases {
		c := &r.rep.Cases[i]
		if c.NotRun || c.Failed() {
			continue
		}
		if hc, was := prev[historyKey(c)]; c.Flaky() || !was || hc.Status == DigestFlaky || (hc.Status == DigestFailed && hc.Class == collect.ClassInfra) {
			continue // a flake is no fix, a failure of the machine's was not the case's to fix
		}
		if len(names) == maxHistoryCut {
			more++
			continue
		}
		names = append(names, plainCut(c.Label(), nameCut))
	}
	if len(names) == 0 {
		return ""
	}
	return w.t("fixed_line", map[string]any{"List": strings.Join(names, ", "), "More": more})
}

// changesBlock is the section's table of the cases whose state changed in
// the runs of the history (docs/render.md §11); "" without history or change.
func (r *renderer) changesBlock(w *writer, p sectionPlan) string {
	if r.hist == nil {
		return ""
	}
	var rows [][]string
	more := 0
	infra, unexplained, flaky := false, false, false // a row shows symInfra, symUnexplained, symFlaky
	for i := range r.rep.Cases {
		c := &r.rep.Cases[i]
		states := r.states(c)
		last := -1
		var prev *runState
		for j := range states {
			st := &states[j]
			if !st.known || st.infra {
				continue
			}
			if prev != nil {
				switch {
				case st.bad != prev.bad, st.flaky != prev.flaky:
					last = j
				case st.bad && st.fp != "" && prev.fp != "" && st.fp != prev.fp:
					// Failing still, but differently: a change too.
					last = j
					if st.sym == symFailed {
						st.sym = symFailedNew
					}
				}
			}
			prev = st
		}
		if last < 0 {
			continue
		}
		if len(rows) == maxHistoryCut {
			more++
			continue
		}
		syms := make([]string, len(states))
		for j, st := range states {
			syms[j] = st.sym
			infra = infra || st.infra
			unexplained = unexplained || st.sym == symUnexplained
			flaky = flaky || st.flaky
		}
		date := cmp.Or(states[last].date, "?")
		rows = append(rows, []string{p.st(text.Cut(c.Label(), digestNameCut)), strings.Join(syms, " "), text.Plain(date)})
	}
	if len(rows) == 0 {
		return ""
	}
	out := w.t("history_heading", nil) + "\n\n" + w.t("history_legend", map[string]any{"N": len(r.hist.runs) + 1, "Infra": infra, "Unexplained": unexplained, "Flaky": flaky}) + "\n\n" +
		w.mdTable([]string{"case", "runs, oldest first", "last change"}, rows)
	if more > 0 {
		out += "\n\n" + w.t("history_more", more)
	}
	return out
}

// squeezeCut is the name cut n, halved under squeeze.
func squeezeCut(p plan, n int) int {
	if p.squeeze {
		return n / 2
	}
	return n
}

// digestCost is an entry's cost in the digest: its ASCII JSON and a comma.
func digestCost(v any) int {
	b, _ := json.Marshal(v)
	return len(asciiJSON(b)) + 1
}

// fitDigest keeps the items that fit in MaxDigestChars, adding their cost
// to *used; the first that does not fit ends the list.
func fitDigest[T any](items []T, used *int) []T {
	var out []T
	for _, it := range items {
		n := digestCost(it)
		if *used+n > MaxDigestChars {
			break
		}
		*used += n
		out = append(out, it)
	}
	return out
}
