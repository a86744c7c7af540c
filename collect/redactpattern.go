package collect

import (
	"bytes"
	"regexp"
	"slices"
)

// Secret patterns (docs/runner.md §3.6's table): what no list of values can
// know and no prefix tells, found by where it stands. Each is found at a
// literal anchor and matched there by a regular expression (RE2: linear)
// whose group 1 (or 2) is the secret, replaced by [REDACTED]; what stands
// around it is kept. The rules follow gitleaks' (github.com/gitleaks/gitleaks,
// commit b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b, cmd/generate/config/rules/:
// privatekey.go, jwt.go, curl.go's curl-auth-header and its Bearer branch,
// slack.go), but for URL user-info (RFC 3986 §3.2.1), Discord webhooks
// (https://discord.com/developers/docs/resources/webhook) and AWS secret
// access keys (AWS's documented form; gitleaks' aws.go has the key id only),
// which gitleaks has no rule for. A PEM block's labels are in upper case as
// RFC 7468 writes them, without gitleaks' dashes (which let one block's end
// run into the next header); a JWT's header always starts eyJ (gitleaks asks
// ey and 17); a Bearer credential holds a digit or is 20 long, so that a
// sentence's words are left.
type pattern struct {
	anchors []string
	re      *regexp.Regexp
	// window is the most a match can span from its anchor (0:
	// maxShapeLen); a streaming writer holds back that much at most.
	window int
	// multiline: a match may cross a line end, so a finished line does
	// not decide it.
	multiline bool
	// valid, when set, must hold of the secret for it to be replaced.
	valid func([]byte) bool
	// fail, when set, is a quick look at the anchor at buf[q]: -1 when a
	// match may start there, else the position before which no anchor of
	// the pattern can start one (at least q+1). Anchors packed in one run
	// (eyJeyJeyJ…) would else each cost the regular expression a scan of
	// the whole run.
	fail func(buf []byte, q int) int
}

var patterns = []pattern{
	{
		anchors:   []string{"-----BEGIN"},
		re:        regexp.MustCompile(`^-----BEGIN (?:[A-Z0-9_]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----(?:([\s\S]*?)-----END (?:[A-Z0-9_]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----|([A-Za-z0-9+/=:,.\s-]+))`),
		window:    16 << 10,
		multiline: true,
	},
	{
		anchors: []string{"eyJ"},
		re:      regexp.MustCompile(`^eyJ([A-Za-z0-9_-]{14,}\.eyJ[A-Za-z0-9_-]{14,}\.[A-Za-z0-9_-]*)`),
		window:  maxShapeLen * 4,
		// The header's run ends where the first '.' must stand: when
		// it ends otherwise, no eyJ inside that run starts a JWT.
		fail: func(buf []byte, q int) int {
			e := q + len("eyJ")
			for e < len(buf) && isDashTokenByte(buf[e]) {
				e++
			}
			if e < len(buf) && buf[e] == '.' {
				return -1
			}
			return e // at the end of buf too: open holds it back
		},
	},
	{
		anchors: []string{"Authorization", "authorization", "AUTHORIZATION"},
		re:      regexp.MustCompile(`^(?i)authorization["']?[ \t]{0,5}[:=][ \t]{0,5}["']?(?:(?:basic|bearer|token|api-token)[ \t]{1,5})?([\w=~@.+/-]{8,})`),
	},
	{
		anchors: []string{"Bearer", "bearer", "BEARER"},
		re:      regexp.MustCompile(`^(?i)bearer[ \t]{1,5}([\w=~@.+/-]{8,})`),
		valid: func(b []byte) bool {
			return len(b) >= 20 || bytes.ContainsAny(b, "0123456789")
		},
	},
	{
		anchors: []string{"://"},
		re:      regexp.MustCompile(`^://([^\s/?#@:"'<>\[\]\\]*:[^\s/?#@"'<>\[\]\\]+)@`),
	},
	{
		anchors: []string{"hooks.slack.com/"},
		re:      regexp.MustCompile(`^hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{43,})`),
	},
	{
		anchors: []string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"},
		re:      regexp.MustCompile(`^discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]{20,})`),
	},
	{
		anchors: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		re:      regexp.MustCompile(`^(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}[ \t,:;=|"']{1,20}([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
	},
	{
		anchors: []string{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey", "secretAccessKey", "secret_access_key", "SECRET_ACCESS_KEY"},
		re:      regexp.MustCompile(`^(?i)(?:aws_)?secret_?access_?key["']?[ \t]{0,5}[:=][ \t]{0,5}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
	},
}

var redactedMark = []byte("[REDACTED]")

// patternMatcher finds the patterns.
type patternMatcher struct{}

// at returns the match of pt at buf[p] (an anchor of it): its length and
// replacement; n is 0 when there is none.
func (pt *pattern) at(buf []byte, p int) (n int, repl []byte) {
	win := buf[p:min(len(buf), p+pt.window)]
	m := pt.re.FindSubmatchIndex(win)
	if m == nil {
		return 0, nil
	}
	for g := 1; 2*g+1 < len(m); g++ {
		s, e := m[2*g], m[2*g+1]
		if s < 0 || s == e {
			continue
		}
		if pt.valid != nil && !pt.valid(win[s:e]) {
			return 0, nil
		}
		repl = append(append(append(repl, win[:s]...), redactedMark...), win[e:m[1]]...)
		return m[1], repl
	}
	return 0, nil
}

func (m patternMatcher) next(buf []byte, i int) (int, int, []byte) {
	// No match starts before the first anchor.
	if i = m.anchor(buf, i); i < 0 {
		return -1, 0, nil
	}
	best, bestN := -1, 0
	var bestRepl []byte
	for k := range patterns {
		pt := &patterns[k]
		for _, a := range pt.anchors {
			for from := i; from < len(buf); {
				j := bytes.Index(buf[from:], []byte(a))
				if j < 0 || (best >= 0 && from+j >= best) {
					break
				}
				q := from + j
				if pt.fail != nil {
					if to := pt.fail(buf, q); to >= 0 {
						from = max(q+1, to)
						continue
					}
				}
				if n, repl := pt.at(buf, q); n > 0 {
					best, bestN, bestRepl = q, n, repl
					break
				}
				from = q + 1
			}
		}
	}
	return best, bestN, bestRepl
}

// anchorPairs[0] is the set of the first two bytes of the anchors and
// anchorPairs[1] of their second and third (every anchor has 3 bytes or
// more), as shapePairs is of the shapes' prefixes; anchorsByFirst are the
// anchors by their first byte.
var (
	anchorPairs    [2][256][4]uint64
	anchorsByFirst [256][]string
)

func init() {
	for k, pt := range patterns {
		if pt.window == 0 {
			patterns[k].window = maxShapeLen
		}
		for _, a := range pt.anchors {
			for k := range anchorPairs {
				anchorPairs[k][a[k]][a[k+1]>>6] |= 1 << (a[k+1] & 63)
			}
			anchorsByFirst[a[0]] = append(anchorsByFirst[a[0]], a)
		}
	}
}

// anchor is the first anchor of any pattern at or after i; -1 when there is
// none. One pass over buf, two bytes at a time (one bytes.Index per anchor
// took a fifth of an import's CPU): an anchor starting at q-1 or q has its
// second and third or its first two bytes at q.
func (patternMatcher) anchor(buf []byte, i int) int {
	for q := i + 1; q+1 < len(buf); q += 2 {
		c, d := buf[q], buf[q+1]
		if anchorPairs[1][c][d>>6]&(1<<(d&63)) != 0 && anchorAt(buf, q-1) {
			return q - 1
		}
		if anchorPairs[0][c][d>>6]&(1<<(d&63)) != 0 && anchorAt(buf, q) {
			return q
		}
	}
	return -1
}

// anchorAt reports whether an anchor starts at buf[p].
func anchorAt(buf []byte, p int) bool {
	return slices.ContainsFunc(anchorsByFirst[buf[p]], func(a string) bool { return bytes.HasPrefix(buf[p:], []byte(a)) })
}

// decided reports whether bytes after buf can no longer change what pt
// matches at buf[p], an anchor of it.
func (pt *pattern) decided(buf []byte, p int) bool {
	tail := buf[p:]
	if len(tail) >= pt.window {
		return true
	}
	if !pt.multiline {
		return bytes.IndexByte(tail, '\n') >= 0
	}
	// A PEM block: decided once its end marker is whole.
	e := bytes.Index(tail, []byte("-----END"))
	return e >= 0 && bytes.Contains(tail[e+len("-----END"):], []byte("-----"))
}

func (patternMatcher) open(buf []byte, i int) int {
	open := len(buf)
	for k := range patterns {
		pt := &patterns[k]
		for _, a := range pt.anchors {
			// An anchor whose match is not decided yet.
			for from := max(i, len(buf)-pt.window); from < open; {
				j := bytes.Index(buf[from:], []byte(a))
				if j < 0 || from+j >= open {
					break
				}
				if q := from + j; !pt.decided(buf, q) {
					open = q
					break
				}
				from += j + 1
			}
			// The beginning of an anchor at the end of buf.
			for p := max(i, len(buf)-len(a)+1); p < open; p++ {
				if bytes.HasPrefix([]byte(a), buf[p:]) {
					open = p
					break
				}
			}
		}
	}
	return open
}

// stillOpen tells a stage, cheaply, that the match at the start of buf,
// held back while its first n bytes were all there was (open put it
// there), is still undecided now that buf has more: no line end for a
// pattern of one line, no whole end marker for a PEM block, the window
// not filled.
func (patternMatcher) stillOpen(buf []byte, n int) bool {
	anchored := false
	for k := range patterns {
		pt := &patterns[k]
		for _, a := range pt.anchors {
			if !bytes.HasPrefix(buf, []byte(a)) {
				continue
			}
			anchored = true
			switch {
			case len(buf) >= pt.window:
				return false
			case !pt.multiline && bytes.IndexByte(buf[n:], '\n') >= 0:
				return false
			case pt.multiline && pt.decided(buf, 0):
				return false
			}
		}
	}
	return anchored
}
