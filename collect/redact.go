package collect

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"
)

// Secret redaction (docs/runner.md §3.6). Whatever the runner writes and
// whatever render and post put in a document passes through one Redactor,
// which replaces
//
//   - the value of every secret environment variable (SecretNames) with
//     `$NAME`, in the form the text holds it: as it is in plain text, as
//     encoding/json writes it inside a JSON string (Redactor.JSON);
//   - every token of the shapes GitHub, Hugging Face, OpenAI, Anthropic,
//     AWS, Slack, GitLab, npm, PyPI and Google issue, whether or
//     not the environment holds it (a token printed by a server, pasted into
//     a prompt, read from a file), with its prefix and [REDACTED].
//
// Redaction applies to the data, before any escaping: Markdown escaping
// turns ghs_… into ghs\_…, which a literal match would no longer find.

// SecretEnvNames are the environment variables whose values are secrets
// wherever they are set: the tokens of GitHub, of the Actions runtime and of
// Hugging Face.
var SecretEnvNames = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
}

// secretSuffixes mark any other variable as a secret by its name's ending
// (any case): API keys, client secrets, passwords of whatever service a
// workflow passes to the job.
var secretSuffixes = []string{"_TOKEN", "_SECRET", "_KEY", "_PASSWORD"}

// minSuffixSecret is the shortest value a variable named like a secret
// (secretSuffixes) must have to be redacted: no credential is shorter, and
// replacing a short value such as "1" or "true" everywhere would make every
// document unreadable. SecretEnvNames are redacted whatever their length.
const minSuffixSecret = 8

// SecretNames are the variables whose values a run must never show:
// SecretEnvNames, then, in byte order, every other variable of environ
// ("NAME=value" as os.Environ gives them) whose name ends in _TOKEN,
// _SECRET, _KEY or _PASSWORD and whose value has at least 8 bytes.
func SecretNames(environ []string) []string {
	names := append([]string(nil), SecretEnvNames...)
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	var more []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || known[name] || len(value) < minSuffixSecret {
			continue
		}
		upper := strings.ToUpper(name)
		for _, suf := range secretSuffixes {
			if strings.HasSuffix(upper, suf) {
				known[name] = true
				more = append(more, name)
				break
			}
		}
	}
	sort.Strings(more)
	return append(names, more...)
}

// Redactor replaces secret values with `$NAME` and token shapes with
// `<prefix>[REDACTED]`. The zero value and nil redact nothing; NewRedactor
// gives one that redacts the token shapes even without any secret value.
// A Redactor never changes after NewRedactor, so it is safe for concurrent
// use.
type Redactor struct {
	text   secrets // the values as they are
	json   secrets // the values as encoding/json writes them inside a string
	shapes bool
}

type secret struct {
	value []byte
	repl  []byte
}

// secrets are literal values to replace, longest first, so that a secret
// containing another wins.
type secrets struct {
	list   []secret
	maxLen int
}

// NewRedactor returns a redactor for the values of names as getenv reports
// them (empty values are ignored: replacing "" would corrupt everything) and
// for the token shapes. getenv may be nil.
func NewRedactor(getenv func(string) string, names ...string) *Redactor {
	r := &Redactor{shapes: true}
	for _, n := range names {
		v := ""
		if getenv != nil {
			v = getenv(n)
		}
		if v == "" {
			continue
		}
		repl := []byte("$" + n)
		r.text.add(secret{value: []byte(v), repl: repl})
		// Inside a JSON string the value reads as encoding/json escapes it:
		// with HTML escaping (json.Marshal, and every MarshalJSON method
		// through it) or without (an Encoder with SetEscapeHTML(false)).
		// The name goes in escaped too: an environment variable's name may
		// hold a quote or a backslash (`env 'A"B_TOKEN=…'`), which would
		// end the string or escape what follows.
		// Without HTML escaping, as merged.json writes its strings.
		forms := jsonForms("$" + n)
		jsonRepl := forms[len(forms)-1]
		for _, f := range jsonForms(v) {
			r.json.add(secret{value: f, repl: jsonRepl})
		}
	}
	r.text.sort()
	r.json.sort()
	return r
}

func (s *secrets) add(v secret) {
	for _, have := range s.list {
		if bytes.Equal(have.value, v.value) {
			return // the first name of a value names it
		}
	}
	s.list = append(s.list, v)
	s.maxLen = max(s.maxLen, len(v.value))
}

func (s *secrets) sort() {
	sort.SliceStable(s.list, func(i, j int) bool { return len(s.list[i].value) > len(s.list[j].value) })
}

// jsonForms are the texts of v inside a JSON string, with and without HTML
// escaping (one when they agree).
func jsonForms(v string) [][]byte {
	html, _ := json.Marshal(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a string always encodes
	plain := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	forms := [][]byte{html[1 : len(html)-1]}
	if p := plain[1 : len(plain)-1]; !bytes.Equal(p, forms[0]) {
		forms = append(forms, p)
	}
	return forms
}

func (r *Redactor) active() bool { return r != nil && (len(r.text.list) > 0 || r.shapes) }

// Bytes returns data with every secret and token shape replaced; data itself
// is not modified, and is returned as it is when nothing was replaced.
func (r *Redactor) Bytes(data []byte) []byte {
	if !r.active() {
		return data
	}
	if len(r.text.list) > 0 {
		data = replaceAll(&r.text, data)
	}
	if r.shapes {
		data = replaceAll(shapeMatcher{}, data)
	}
	return data
}

// String returns s with every secret and token shape replaced.
func (r *Redactor) String(s string) string {
	if !r.active() {
		return s
	}
	out := r.Bytes([]byte(s))
	if string(out) == s {
		return s
	}
	return string(out)
}

// JSON returns data, a JSON text as encoding/json writes it, with every
// secret replaced inside its strings (object keys included) in the form
// the string holds it, and every token shape; nothing outside a string is
// touched, so valid JSON stays valid and decodes to the redacted values.
// data itself is returned when nothing was replaced.
func (r *Redactor) JSON(data []byte) []byte {
	if !r.active() {
		return data
	}
	if len(r.json.list) > 0 {
		data = r.json.replaceInStrings(data)
	}
	if r.shapes {
		// A token's characters are never escaped in JSON and a match
		// never starts outside a string (every prefix starts with a
		// letter and holds an upper-case letter, '_' or '-' that no JSON
		// literal has) nor crosses a quote, so the shapes are found in
		// the JSON text exactly as in its strings.
		data = replaceAll(shapeMatcher{}, data)
	}
	return data
}

// matcher finds one kind of secret in a text.
type matcher interface {
	// next returns the earliest match at or after i (the longest of those
	// starting there): its start, its length and its replacement; start is
	// -1 when there is none.
	next(buf []byte, i int) (start, n int, repl []byte)
	// open returns the earliest position at or after i where a match might
	// start that bytes after buf would decide (a secret's beginning at the
	// end of buf); len(buf) when there is none. A streaming writer holds
	// back from there, and only from there, so that a text that ends
	// between secrets (a log line) is written out at once.
	open(buf []byte, i int) int
}

// replaceAll replaces every match of m in the whole of buf; buf itself is
// returned when there is none.
func replaceAll(m matcher, buf []byte) []byte {
	if j, _, _ := m.next(buf, 0); j < 0 {
		return buf
	}
	out, _ := replace(m, buf, true)
	return out
}

// replace rewrites buf. Unless final, it stops at the first position whose
// match later bytes could change, and returns the bytes from there as the
// rest to carry over: every match it makes is the one the whole stream
// would get. out is buf itself (cut) when nothing was replaced: it holds
// until buf is changed.
func replace(m matcher, buf []byte, final bool) (out, rest []byte) {
	i := 0
	for {
		cut := len(buf)
		if !final {
			cut = m.open(buf, i)
		}
		j, n, repl := m.next(buf, i)
		if j < 0 || j >= cut {
			if i == 0 {
				out = buf[:cut] // nothing replaced: no copy
			} else {
				out = append(out, buf[i:cut]...)
			}
			return out, append([]byte(nil), buf[cut:]...)
		}
		out = append(out, buf[i:j]...)
		out = append(out, repl...)
		i = j + n
	}
}

func (s *secrets) next(buf []byte, i int) (int, int, []byte) {
	best, bestS := -1, (*secret)(nil)
	for k := range s.list {
		sec := &s.list[k]
		lim := len(buf)
		if best >= 0 {
			lim = min(len(buf), best+len(sec.value)) // only an earlier start can win
		}
		j := bytes.Index(buf[i:lim], sec.value)
		if j < 0 {
			continue
		}
		if best < 0 || i+j < best {
			best, bestS = i+j, sec
		}
	}
	if bestS == nil {
		return -1, 0, nil
	}
	return best, len(bestS.value), bestS.repl
}

func (s *secrets) open(buf []byte, i int) int {
	for p := max(i, len(buf)-s.maxLen+1); p < len(buf); p++ {
		tail := buf[p:]
		for k := range s.list {
			if v := s.list[k].value; len(v) > len(tail) && bytes.HasPrefix(v, tail) {
				return p
			}
		}
	}
	return len(buf)
}

// replaceInStrings replaces the secrets' JSON forms where they stand inside
// a string of the JSON text data, at a character boundary (not inside an
// escape such as \n); a match elsewhere is left alone.
func (s *secrets) replaceInStrings(data []byte) []byte {
	st := jsonState{data: data}
	var out []byte
	i, from := 0, 0
	for {
		j, n, repl := s.next(data, from)
		if j < 0 {
			break
		}
		if !st.inString(j) {
			from = j + 1
			continue
		}
		out = append(out, data[i:j]...)
		out = append(out, repl...)
		i, from = j+n, j+n
	}
	if out == nil {
		return data
	}
	return append(out, data[i:]...)
}

// jsonState walks a JSON text forward to tell whether a position is inside
// a string. Positions must be asked in increasing order.
type jsonState struct {
	data  []byte
	pos   int  // the walk has read data[:pos]
	inStr bool // data[pos] is inside a string (after its opening quote)
}

// inString reports whether a JSON-escaped secret starting at j lies inside
// one string: j is after the string's opening quote, at a character or
// escape boundary. A JSON-escaped text holds no bare quote, so a match that
// starts so also ends in that string.
func (st *jsonState) inString(j int) bool {
	for st.pos < j {
		if !st.inStr {
			k := bytes.IndexByte(st.data[st.pos:j], '"')
			if k < 0 {
				st.pos = j
				break
			}
			st.pos += k + 1
			st.inStr = true
			continue
		}
		k := bytes.IndexAny(st.data[st.pos:j], "\"\\")
		if k < 0 {
			st.pos = j
			break
		}
		p := st.pos + k
		if st.data[p] == '"' {
			st.pos, st.inStr = p+1, false
			continue
		}
		st.pos = p + 2 // \n, \", \\ ...
		if p+1 < len(st.data) && st.data[p+1] == 'u' {
			st.pos = p + 6 // \uXXXX
		}
	}
	// pos beyond j: j is inside an escape.
	return st.pos == j && st.inStr && st.data[j] != '"'
}

// Token shapes, as their issuers document them or as gitleaks' maintained
// rule set describes them (github.com/gitleaks/gitleaks, commit
// b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b, cmd/generate/config/rules/
// openai.go, anthropic.go, aws.go, slack.go, gitlab.go, npm.go, pypi.go,
// gcp.go):
//
//   - GitHub: ghp_ (personal access token, classic), gho_ (OAuth), ghu_
//     (app user-to-server), ghs_ (app server-to-server, which the Actions
//     GITHUB_TOKEN is) and ghr_ (refresh), then 36 characters of
//     [A-Za-z0-9_] today; GitHub reserves longer tokens, and its stateless
//     ghs_ tokens are JWTs of about 520 characters with dots (GitHub's
//     recommended pattern is ghs_[A-Za-z0-9._]{36,}). Matched: the prefix
//     and at least 36 of [A-Za-z0-9._], trailing dots left out (a sentence's
//     full stop).
//   - GitHub fine-grained personal access tokens: github_pat_, then 82 of
//     [A-Za-z0-9_] (22, '_', 59). Matched: at least the first 22.
//   - Hugging Face user access tokens: hf_, then 34 letters. Matched: at
//     least 34 letters, so identifiers such as hf_model, hf_hub_download or
//     hf_transfer (short runs, broken by underscores) are never taken.
//   - OpenAI (openai.go): sk-proj-, sk-svcacct- and sk-admin-, then 58 or 74
//     of [A-Za-z0-9_-], T3BlbkFJ and as many again; the legacy sk-, then 20
//     of [A-Za-z0-9], T3BlbkFJ and 20 more. Matched: the prefix and at least
//     58 of [A-Za-z0-9_-] (the marker is not required), and sk- with at least
//     48 of [A-Za-z0-9].
//   - Anthropic (anthropic.go): sk-ant-api03- and sk-ant-admin01-, then 93
//     of [A-Za-z0-9_-] and AA. Matched: the prefix and at least 95.
//   - AWS access key ids (aws.go): AKIA, ASIA, ABIA or ACCA, then 16 of
//     [A-Z2-7]. Matched: the prefix and at least 16 of [A-Z2-7].
//   - Slack (slack.go): xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe- and xoxo-,
//     then digits, letters and dashes (the shortest rule, xox[ar]-, wants 8).
//     Matched: the prefix and at least 10 of [A-Za-z0-9-].
//   - GitLab personal access tokens (gitlab.go): glpat-, then 20 of
//     [A-Za-z0-9_-]. Matched: at least 20.
//   - npm (npm.go): npm_, then 36 of [A-Za-z0-9]. Matched: at least 36.
//   - PyPI upload tokens (pypi.go): pypi-AgEIcHlwaS5vcmc (the macaroon's
//     "pypi.org" location), then 50 to 1000 of [A-Za-z0-9_-]. Matched: at
//     least 50.
//   - Google API keys (gcp.go): AIza, then 35 of [A-Za-z0-9_-]. Matched: at
//     least 35.
//
// Every minimum is the length of the real tokens or the distinctive part of
// one, long enough that no word, identifier, path or commit id (hex, 40
// characters, never after such a prefix) of a log matches. A match is at
// most maxShapeLen bytes: the rest of a longer run is left as it is.
type shape struct {
	prefix string
	min    int
	class  func(byte) bool
	trim   byte // trailing bytes left out of a match; 0: none
	repl   []byte
}

// shapes are tried in this order at a position: a prefix before any prefix
// of it (sk-ant-api03- before sk-).
var shapes = []shape{
	{prefix: "github_pat_", min: 22, class: isTokenByte},
	{prefix: "ghp_", min: 36, class: isGitHubByte, trim: '.'},
	{prefix: "gho_", min: 36, class: isGitHubByte, trim: '.'},
	{prefix: "ghu_", min: 36, class: isGitHubByte, trim: '.'},
	{prefix: "ghs_", min: 36, class: isGitHubByte, trim: '.'},
	{prefix: "ghr_", min: 36, class: isGitHubByte, trim: '.'},
	{prefix: "hf_", min: 34, class: isLetter},
	{prefix: "sk-ant-api03-", min: 95, class: isDashTokenByte},
	{prefix: "sk-ant-admin01-", min: 95, class: isDashTokenByte},
	{prefix: "sk-proj-", min: 58, class: isDashTokenByte},
	{prefix: "sk-svcacct-", min: 58, class: isDashTokenByte},
	{prefix: "sk-admin-", min: 58, class: isDashTokenByte},
	{prefix: "sk-", min: 48, class: isAlnum},
	{prefix: "AKIA", min: 16, class: isBase32Upper},
	{prefix: "ASIA", min: 16, class: isBase32Upper},
	{prefix: "ABIA", min: 16, class: isBase32Upper},
	{prefix: "ACCA", min: 16, class: isBase32Upper},
	{prefix: "AIza", min: 35, class: isDashTokenByte},
	{prefix: "xoxb-", min: 10, class: isDashAlnum},
	{prefix: "xoxp-", min: 10, class: isDashAlnum},
	{prefix: "xoxa-", min: 10, class: isDashAlnum},
	{prefix: "xoxr-", min: 10, class: isDashAlnum},
	{prefix: "xoxs-", min: 10, class: isDashAlnum},
	{prefix: "xoxe-", min: 10, class: isDashAlnum},
	{prefix: "xoxo-", min: 10, class: isDashAlnum},
	{prefix: "glpat-", min: 20, class: isDashTokenByte},
	{prefix: "npm_", min: 36, class: isAlnum},
	{prefix: "pypi-AgEIcHlwaS5vcmc", min: 50, class: isDashTokenByte},
}

// shapesByFirst lists the shapes by the first byte of their prefix, in
// shapes' order; shapePairs[a] is the set of the bytes b (four 64-bit
// words) such that some prefix starts with a, b.
var (
	shapesByFirst [256][]*shape
	shapePairs    [256][4]uint64
)

// shapeRunByte holds every byte a match can hold (of a prefix or a
// class), and minShapeRun is the shortest match (a prefix and its
// minimum): shapeMatcher.next skips what cannot hold a match.
var (
	shapeRunByte [256]bool
	minShapeRun  = maxShapeLen
)

func init() {
	for i := range shapes {
		sh := &shapes[i]
		sh.repl = []byte(sh.prefix + "[REDACTED]")
		c := sh.prefix[0]
		shapesByFirst[c] = append(shapesByFirst[c], sh)
		shapePairs[c][sh.prefix[1]>>6] |= 1 << (sh.prefix[1] & 63) // every prefix has 3 bytes or more
		for j := 0; j < len(sh.prefix); j++ {
			shapeRunByte[sh.prefix[j]] = true
		}
		for b := range 256 {
			if sh.class(byte(b)) {
				shapeRunByte[b] = true
			}
		}
		minShapeRun = min(minShapeRun, len(sh.prefix)+sh.min)
	}
}

// maxShapeLen bounds a shape match (and so what a streaming writer holds
// back for one): twice the longest token GitHub has announced.
const maxShapeLen = 1024

func isLetter(c byte) bool        { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool         { return isLetter(c) || c >= '0' && c <= '9' }
func isTokenByte(c byte) bool     { return isAlnum(c) || c == '_' }
func isDashTokenByte(c byte) bool { return isTokenByte(c) || c == '-' }
func isDashAlnum(c byte) bool     { return isAlnum(c) || c == '-' }
func isBase32Upper(c byte) bool   { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' }
func isGitHubByte(c byte) bool    { return isTokenByte(c) || c == '.' }

// shapeMatcher finds the token shapes.
type shapeMatcher struct{}

// shapeAt returns the length of the shape match starting at buf[p] (0:
// none) and its shape. A run that reaches the end of buf ends there.
func shapeAt(buf []byte, p int) (int, *shape) {
	for _, sh := range shapesByFirst[buf[p]] {
		if !bytes.HasPrefix(buf[p:], []byte(sh.prefix)) {
			continue
		}
		end := p + len(sh.prefix)
		lim := min(len(buf), p+maxShapeLen)
		for end < lim && sh.class(buf[end]) {
			end++
		}
		for sh.trim != 0 && end > p+len(sh.prefix) && buf[end-1] == sh.trim {
			end--
		}
		if end-p-len(sh.prefix) >= sh.min {
			return end - p, sh
		}
	}
	return 0, nil
}

func (shapeMatcher) next(buf []byte, i int) (int, int, []byte) {
	// A match is a run of at least minShapeRun bytes of shapeRunByte. The
	// byte minShapeRun-1 ahead is looked at first: when it cannot be in a
	// match, none starts before it and the scan jumps past it (most of a
	// JSON text or a log line is skipped so). Else the run of
	// shapeRunByte around it is found, and only a run long enough is
	// looked at a byte at a time: a table lookup a byte, of the byte and
	// the next, whether a prefix starts there.
	p := i
	for p+minShapeRun <= len(buf) {
		k := p + minShapeRun - 1
		if !shapeRunByte[buf[k]] {
			p = k + 1
			continue
		}
		s := k
		for s > p && shapeRunByte[buf[s-1]] {
			s--
		}
		e := k + 1
		for e < len(buf) && shapeRunByte[buf[e]] {
			e++
		}
		if e-s >= minShapeRun {
			for q := s; q+1 < e; q++ {
				if c := buf[q+1]; shapePairs[buf[q]][c>>6]&(1<<(c&63)) == 0 {
					continue
				}
				if n, sh := shapeAt(buf, q); n > 0 {
					return q, n, sh.repl
				}
			}
		}
		p = e
	}
	return -1, 0, nil
}

func (shapeMatcher) open(buf []byte, i int) int {
	// An open match is a prefix of a shape, or a whole prefix followed by
	// its class up to the end of buf, shorter than maxShapeLen.
	for p := max(i, len(buf)-maxShapeLen+1); p < len(buf); p++ {
		tail := buf[p:]
		for _, sh := range shapesByFirst[buf[p]] {
			if len(tail) <= len(sh.prefix) {
				if strings.HasPrefix(sh.prefix, string(tail)) {
					return p
				}
				continue
			}
			if bytes.HasPrefix(tail, []byte(sh.prefix)) && allIn(tail[len(sh.prefix):], sh.class) {
				return p
			}
		}
	}
	return len(buf)
}

// allIn reports whether every byte of b is in class.
func allIn(b []byte, class func(byte) bool) bool {
	for _, c := range b {
		if !class(c) {
			return false
		}
	}
	return true
}

// Writer returns a writer that redacts a stream into w, even when a secret
// is split across writes; it holds back only what may be the beginning of a
// secret, so that a line is written out as soon as it ends. Close flushes
// what it holds back (and does not close w).
func (r *Redactor) Writer(w io.Writer) *RedactWriter {
	rw := &RedactWriter{w: w}
	if r == nil {
		return rw
	}
	// Secret values first, then shapes, as Bytes does: the shape stage sees
	// the values already replaced.
	if r.shapes {
		s := &stage{m: shapeMatcher{}, w: w}
		rw.stages = append(rw.stages, s)
		rw.w = s
	}
	if len(r.text.list) > 0 {
		s := &stage{m: &r.text, w: rw.w}
		rw.stages = append([]*stage{s}, rw.stages...)
		rw.w = s
	}
	return rw
}

// RedactWriter is a streaming redactor; see Redactor.Writer.
type RedactWriter struct {
	w      io.Writer // the first stage, or the destination
	stages []*stage  // in stream order
}

// Write redacts p into the underlying writer; it reports len(p) on success.
func (rw *RedactWriter) Write(p []byte) (int, error) {
	if _, err := rw.w.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes out the held-back tail.
func (rw *RedactWriter) Close() error {
	var errs []error
	for _, s := range rw.stages {
		errs = append(errs, s.flush())
	}
	return errors.Join(errs...)
}

// stage is one matcher of a RedactWriter.
type stage struct {
	m    matcher
	w    io.Writer
	hold []byte
	// buf is where what is held and the next write are joined, reused
	// from write to write.
	buf []byte
}

func (s *stage) Write(p []byte) (int, error) {
	buf := append(append(s.buf[:0], s.hold...), p...)
	s.buf = buf
	out, rest := replace(s.m, buf, false)
	s.hold = rest
	if len(out) > 0 {
		if _, err := s.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (s *stage) flush() error {
	if len(s.hold) == 0 {
		return nil
	}
	out, _ := replace(s.m, s.hold, true)
	s.hold = nil
	_, err := s.w.Write(out)
	return err
}
