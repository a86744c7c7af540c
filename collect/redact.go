package collect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Secret redaction (docs/runner.md §3.6): secret values as `$NAME`, then
// patterns (redactpattern.go), then token shapes, before any escaping
// (ghs\_… would no longer match); JSON string by string, decoded.

// SecretEnvNames are the environment variables whose values are secrets
// wherever they are set, whatever their length: the tokens of GitHub, of the
// Actions runtime and of Hugging Face.
var SecretEnvNames = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
}

// secretNameParts mark any other variable as a secret when its name holds
// one (any case), secretSuffixes when it ends in one.
var (
	secretNameParts = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "ACCESS_KEY", "CREDENTIAL", "PRIVATE", "AUTH"}
	secretSuffixes  = []string{"_KEY"}
)

// MinSecretLen is the shortest value a variable named like a secret
// (IsSecretName) must have to be redacted (docs/runner.md §3.6). GitHub
// Actions masks every non-empty secret value (actions/runner, commit
// 258d6c857db3519913f7deb6004b60172f8043ae, src/Runner.Worker/Worker.cs;
// only derived variations have a minimum, src/Sdk/DTLogging/Logging/
// ValueEncoders.cs), but a name pattern is wider than Actions' explicit
// secrets, and no credential is that short. SecretEnvNames and the token
// post is given are redacted whatever their length, as Actions does.
const MinSecretLen = 8

// IsSecretName reports whether a variable named name holds a secret by its
// name (secretNameParts, secretSuffixes, but notSecretAfter).
func IsSecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, part := range secretNameParts {
		for _, rest := range strings.Split(upper, part)[1:] {
			if !notSecretAfter(part, rest) {
				return true
			}
		}
	}
	return slices.ContainsFunc(secretSuffixes, func(suf string) bool { return strings.HasSuffix(upper, suf) })
}

// notSecretAfter reports whether part, followed by rest in a name, is a
// word that only looks like a secret's mark (MAX_NUM_BATCHED_TOKENS,
// TOKENIZERS_PARALLELISM, GIT_AUTHOR_NAME).
func notSecretAfter(part, rest string) bool {
	switch part {
	case "TOKEN":
		return strings.HasPrefix(rest, "S") || strings.HasPrefix(rest, "IZ")
	case "AUTH":
		return strings.HasPrefix(rest, "OR")
	}
	return false
}

// isPlainNumber reports whether v is a decimal number (digits, maybe a
// sign and a point): a count or a size, never a credential, and replacing
// it would hide the numbers of a report.
func isPlainNumber(v string) bool {
	v = strings.TrimLeft(v, "+-")
	return strings.Trim(v, "0123456789.") == "" && strings.ContainsAny(v, "0123456789")
}

// secretByName reports whether the variable name=value is a secret: by its
// name, its value long enough and not a plain number.
func secretByName(name, value string) bool {
	return len(value) >= MinSecretLen && !isPlainNumber(value) && IsSecretName(name)
}

// SecretNames are the variables whose values a run must never show:
// SecretEnvNames, then, in byte order, every other variable of environ
// (os.Environ) that secretByName takes.
func SecretNames(environ []string) []string {
	var more []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && !slices.Contains(SecretEnvNames, name) && secretByName(name, value) {
			more = append(more, name)
		}
	}
	slices.Sort(more)
	return append(slices.Clone(SecretEnvNames), slices.Compact(more)...)
}

// Secret is a value to redact and the name it is shown as ($Name).
type Secret struct {
	Name, Value string
}

// EnvSecrets are the secrets of an env a plan or part gives an engine or a
// server (secretByName), in the env's order.
func EnvSecrets(e Env) []Secret {
	var out []Secret
	for _, k := range e.Keys() {
		if v, _ := e.Get(k); secretByName(k, v) {
			out = append(out, Secret{Name: k, Value: v})
		}
	}
	return out
}

// Secrets are the secrets of the engines' and servers' env a setup shows
// (EnvSecrets), in file order: a part another tool wrote may show them, so
// render adds them to its redactor.
func (s *Setup) Secrets() []Secret {
	if s == nil {
		return nil
	}
	var out []Secret
	for _, k := range s.Engines.Keys() {
		e, _ := s.Engines.Get(k)
		out = append(out, EnvSecrets(e.Env)...)
	}
	for i := range s.Cases {
		out = append(out, EnvSecrets(s.Cases[i].Env)...)
	}
	return out
}

// Redactor replaces secret values with `$NAME` and token shapes with
// `<prefix>[REDACTED]`. The zero value and nil redact nothing. A Redactor
// never changes after NewRedactor, so it is safe for concurrent use.
type Redactor struct {
	secrets []Secret // what it was made of
	text    secrets  // the values in every form a text may hold them
	shapes  bool
}

type secret struct {
	value []byte
	repl  []byte
}

// secrets are literal values to replace, longest first.
type secrets struct {
	list   []secret
	maxLen int
}

// NewRedactor returns a redactor for the values of names as getenv reports
// them (empty values are ignored: replacing "" would corrupt everything) and
// for the token shapes. getenv may be nil.
func NewRedactor(getenv func(string) string, names ...string) *Redactor {
	var list []Secret
	for _, n := range names {
		if getenv != nil {
			list = append(list, Secret{Name: n, Value: getenv(n)})
		}
	}
	return newRedactor(list)
}

// With returns a redactor of r's secrets and more (r itself when more adds
// nothing); r may be nil.
func (r *Redactor) With(more ...Secret) *Redactor {
	if len(more) == 0 && r != nil {
		return r
	}
	var list []Secret
	if r != nil {
		list = r.secrets
	}
	return newRedactor(append(slices.Clip(list), more...))
}

func newRedactor(list []Secret) *Redactor {
	r := &Redactor{shapes: true}
	for _, s := range list {
		if s.Value == "" {
			continue
		}
		r.secrets = append(r.secrets, s)
		// A replacement keeps the line ends of what it replaces, no more.
		repl := []byte("$" + strings.NewReplacer("\n", " ", "\r", " ").Replace(s.Name))
		for _, f := range secretForms(s.Value) {
			r.text.add(secret{value: []byte(f), repl: repl})
		}
	}
	// Longest first, so that a secret containing another wins.
	slices.SortStableFunc(r.text.list, func(a, b secret) int { return cmp.Compare(len(b.value), len(a.value)) })
	return r
}

// secretForms are the texts a value v may stand as (docs/runner.md §3.6),
// the way GitHub Actions masks a secret (actions/runner, commit
// 258d6c857db3519913f7deb6004b60172f8043ae, src/Runner.Common/HostContext.cs
// registers the encoders of src/Sdk/DTLogging/Logging/ValueEncoders.cs;
// src/Runner.Worker/Worker.cs adds each line of a secret).
func secretForms(v string) []string {
	forms := append([]string{v}, jsonForms(v)...)
	forms = append(forms, escapeData(v), url.QueryEscape(v))
	if strings.ContainsAny(v, "\r\n") {
		for _, line := range strings.FieldsFunc(v, func(c rune) bool { return c == '\r' || c == '\n' }) {
			if line = strings.TrimSpace(line); len(line) >= MinSecretLen {
				forms = append(forms, line)
			}
		}
	}
	return forms
}

// escapeData is v percent-encoded as RFC 3986 §2.3 leaves only the
// unreserved characters (what .NET's Uri.EscapeDataString writes).
func escapeData(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func (s *secrets) add(v secret) {
	if slices.ContainsFunc(s.list, func(have secret) bool { return bytes.Equal(have.value, v.value) }) {
		return // the first name of a value names it
	}
	s.list = append(s.list, v)
	s.maxLen = max(s.maxLen, len(v.value))
}

// jsonForms are the texts of v inside a JSON string, with and without HTML
// escaping (one when they agree).
func jsonForms(v string) []string {
	html, _ := json.Marshal(v)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a string always encodes
	forms := []string{string(html[1 : len(html)-1])}
	if plain := strings.TrimSuffix(b.String(), "\n"); plain[1:len(plain)-1] != forms[0] {
		forms = append(forms, plain[1:len(plain)-1])
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
		data = replaceAll(patternMatcher{}, data)
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

// JSON returns data, a JSON text, with every string (object keys included)
// redacted as String redacts it, decoded first, so a secret is found however
// a writer escaped it (HTML escaping, Python's \uXXXX); a changed string is
// requoted by jsontext and nothing outside strings is touched, so valid JSON
// stays valid. data itself is returned when nothing was replaced.
func (r *Redactor) JSON(data []byte) []byte {
	if !r.active() {
		return data
	}
	// Only strings that may hold a secret are decoded: one holding an
	// escape (a backslash), or one where a secret's value or a shape
	// stands as it is. The rest of the text is copied as it is.
	var (
		out    []byte
		st     = jsonState{data: data}
		copied int                  // data[:copied] is in out
		from   int                  // no candidate before from is left
		cands  = [3]int{-2, -2, -2} // -2: not looked for yet
		str    []byte               // a decoded string, reused
	)
	for {
		j := -1
		for k := range cands {
			if cands[k] != -1 && cands[k] < from {
				cands[k] = r.nextCandidate(k, data, from)
			}
			if c := cands[k]; c >= 0 && (j < 0 || c < j) {
				j = c
			}
		}
		if j < 0 {
			break
		}
		s, e, ok := st.span(j)
		if !ok {
			from = j + 1
			continue
		}
		raw := data[s:e] // with its quotes
		var err error
		if str, err = jsontext.AppendUnquote(str[:0], raw); err != nil {
			// Invalid UTF-8 reads as U+FFFD, as decoders read it; what
			// else is not a valid string is looked at as its bytes.
			if str, err = jsontext.AppendUnquote(str[:0], validUTF8(raw)); err != nil {
				str = append(str[:0], raw[1:len(raw)-1]...)
			}
		}
		if red := r.Bytes(str); !bytes.Equal(red, str) {
			out = append(out, data[copied:s]...)
			out, _ = jsontext.AppendQuote(out, red) // invalid UTF-8 becomes U+FFFD
			copied = e
		}
		from = e
	}
	if st.broken {
		// Not JSON (a string never ends): redacted as text.
		return r.Bytes(data)
	}
	if out == nil {
		return data
	}
	return append(out, data[copied:]...)
}

// nextCandidate is the first position at or after from where JSON's
// matcher k (0: the values, also any backslash; 1: the patterns; 2: the
// shapes) may find something; -1 when there is none.
func (r *Redactor) nextCandidate(k int, data []byte, from int) int {
	switch {
	case k == 0:
		j := -1
		if len(r.text.list) > 0 {
			j, _, _ = r.text.next(data, from)
		}
		if b := bytes.IndexByte(data[from:], '\\'); b >= 0 && (j < 0 || from+b < j) {
			j = from + b
		}
		return j
	case !r.shapes:
		return -1
	case k == 1:
		return patternMatcher{}.anchor(data, from)
	}
	j, _, _ := shapeMatcher{}.next(data, from)
	return j
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
// rest to carry over. out is buf itself (cut) when nothing was replaced.
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
		// A secret of several lines leaves its line ends: the lines
		// around it keep their numbers.
		for range bytes.Count(buf[j:j+n], []byte("\n")) - bytes.Count(repl, []byte("\n")) {
			out = append(out, '\n')
		}
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
		if slices.ContainsFunc(s.list, func(v secret) bool { return len(v.value) > len(tail) && bytes.HasPrefix(v.value, tail) }) {
			return p
		}
	}
	return len(buf)
}

// jsonState walks a JSON text forward to find the string literal that
// holds a position, asked in increasing order.
type jsonState struct {
	data   []byte
	pos    int  // the walk has read data[:pos], which ends outside a string
	broken bool // a string has no closing quote
}

// span returns the string literal of data holding position j, its quotes
// included, if one does.
func (st *jsonState) span(j int) (s, e int, ok bool) {
	for st.pos <= j && st.pos < len(st.data) {
		k := bytes.IndexByte(st.data[st.pos:], '"')
		if k < 0 {
			st.pos = len(st.data)
			return 0, 0, false
		}
		q := st.pos + k
		if q > j {
			st.pos = q
			return 0, 0, false
		}
		end := stringEnd(st.data, q+1)
		if end < 0 {
			st.broken, st.pos = true, len(st.data)
			return 0, 0, false
		}
		st.pos = end + 1
		if j <= end {
			return q, end + 1, true
		}
	}
	return 0, 0, false
}

// stringEnd is the closing quote of the string whose text starts at i; -1
// when it has none.
func stringEnd(data []byte, i int) int {
	for i < len(data) {
		k := bytes.IndexAny(data[i:], "\"\\")
		if k < 0 {
			return -1
		}
		if p := i + k; data[p] == '"' {
			return p
		}
		i += k + 2 // \n, \", \\ ...: \uXXXX's digits hold no quote or backslash
	}
	return -1
}

// Token shapes (docs/runner.md §3.6's table), as their issuers document
// them or as gitleaks' maintained rule set describes them
// (github.com/gitleaks/gitleaks, commit
// b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b, cmd/generate/config/rules/
// openai.go, anthropic.go, aws.go, slack.go, gitlab.go, npm.go, pypi.go,
// gcp.go). Stateless ghs_ tokens are JWTs of about 520 characters with dots
// (GitHub's recommended pattern is ghs_[A-Za-z0-9._]{36,}), so dots match,
// trailing ones (a full stop) not. Every minimum is long enough that no
// word, identifier, path or commit id of a log matches. A match is at most
// maxShapeLen bytes: the rest of a longer run is left as it is.
type shape struct {
	prefix string
	min    int
	class  func(byte) bool
	trim   byte // trailing bytes left out of a match; 0: none
	repl   []byte
}

// shapes are tried in this order at a position: a prefix before any prefix
// of it (sk-ant-api03- before sk-).
var shapes = slices.Concat(
	shapeFamily(22, isTokenByte, 0, "github_pat_"),
	shapeFamily(36, isGitHubByte, '.', "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
	shapeFamily(34, isLetter, 0, "hf_"),
	shapeFamily(95, isDashTokenByte, 0, "sk-ant-api03-", "sk-ant-admin01-"),
	shapeFamily(58, isDashTokenByte, 0, "sk-proj-", "sk-svcacct-", "sk-admin-"),
	shapeFamily(48, isAlnum, 0, "sk-"),
	shapeFamily(16, isBase32Upper, 0, "AKIA", "ASIA", "ABIA", "ACCA"),
	shapeFamily(35, isDashTokenByte, 0, "AIza"),
	shapeFamily(10, isDashAlnum, 0, "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxo-"),
	shapeFamily(20, isDashTokenByte, 0, "glpat-"),
	shapeFamily(36, isAlnum, 0, "npm_"),
	shapeFamily(50, isDashTokenByte, 0, "pypi-AgEIcHlwaS5vcmc"),
)

// shapeFamily is one shape per prefix, alike but for it.
func shapeFamily(min int, class func(byte) bool, trim byte, prefixes ...string) []shape {
	out := make([]shape, len(prefixes))
	for i, p := range prefixes {
		out[i] = shape{prefix: p, min: min, class: class, trim: trim}
	}
	return out
}

// shapesByFirst lists the shapes by the first byte of their prefix;
// shapePairs[a] is the set of the bytes b such that some prefix starts with
// a, b. shapeRunByte holds every byte a match can hold, and minShapeRun is
// the shortest match: shapeMatcher.next skips what cannot hold a match.
var (
	shapesByFirst [256][]*shape
	shapePairs    [256][4]uint64
	shapeRunByte  [256]bool
	minShapeRun   = maxShapeLen
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

func isLetter(c byte) bool         { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool          { return isLetter(c) || c >= '0' && c <= '9' }
func isTokenByte(c byte) bool      { return isAlnum(c) || c == '_' }
func isDashTokenByte(c byte) bool  { return isTokenByte(c) || c == '-' }
func isDashAlnum(c byte) bool      { return isAlnum(c) || c == '-' }
func isBase32Upper(c byte) bool    { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' }
func isGitHubByte(c byte) bool     { return isTokenByte(c) || c == '.' }
func isPrintableASCII(c byte) bool { return c >= 0x20 && c <= 0x7e }

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
	// A match is a run of at least minShapeRun bytes of shapeRunByte: when
	// the byte minShapeRun-1 ahead cannot be in one, the scan jumps past it.
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
func allIn[T string | []byte](b T, class func(byte) bool) bool {
	for i := 0; i < len(b); i++ {
		if !class(b[i]) {
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
	rw := &RedactWriter{w: w, red: r}
	if r == nil {
		return rw
	}
	// Values, patterns, shapes, as Bytes does.
	if r.shapes {
		s := &stage{m: shapeMatcher{}, w: w}
		p := &stage{m: patternMatcher{}, w: s}
		rw.stages = append(rw.stages, p, s)
		rw.w = p
	}
	rw.addText()
	return rw
}

// addText makes the first stage match rw.red's secret values, when it
// has any: a new stage, or the one before with the values it learned.
func (rw *RedactWriter) addText() {
	if len(rw.red.text.list) == 0 {
		return
	}
	if len(rw.stages) > 0 {
		if _, ok := rw.stages[0].m.(*secrets); ok {
			rw.stages[0].m = &rw.red.text
			return
		}
	}
	s := &stage{m: &rw.red.text, w: rw.w}
	rw.stages = append([]*stage{s}, rw.stages...)
	rw.w = s
}

// Learn makes rw redact more secrets from now on (those of a setup.json
// read after the stream began), what it holds back included. A writer of a
// nil Redactor learns none.
func (rw *RedactWriter) Learn(more ...Secret) {
	if rw.red != nil {
		rw.red = rw.red.With(more...)
		rw.addText()
	}
}

// Redactor is the redactor of rw's secrets, with those it learned.
func (rw *RedactWriter) Redactor() *Redactor { return rw.red }

// RedactWriter is a streaming redactor; see Redactor.Writer.
type RedactWriter struct {
	w      io.Writer // the first stage, or the destination
	stages []*stage  // in stream order
	red    *Redactor
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
	buf  []byte // where what is held and the next write are joined
	held int    // how much was held back after the last match
}

func (s *stage) Write(p []byte) (int, error) {
	// While new bytes leave the held match open they are only added
	// (matching it all again made small writes quadratic), and while no
	// line ends it is matched again only once it has doubled.
	if pm, ok := s.m.(patternMatcher); ok && len(s.hold) > 0 {
		n := len(s.hold)
		s.hold = append(s.hold, p...)
		if pm.stillOpen(s.hold, n) || len(s.hold) < 2*s.held && bytes.IndexByte(p, '\n') < 0 {
			return len(p), nil
		}
		s.hold = s.hold[:n]
	}
	buf := append(append(s.buf[:0], s.hold...), p...)
	s.buf = buf
	out, rest := replace(s.m, buf, false)
	s.hold, s.held = rest, len(rest)
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
