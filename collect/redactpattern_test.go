package collect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Real-format examples, built at run time so that no scanner of this
// repository takes them for leaked secrets.
var (
	// A PEM RSA private key block: base64 lines of 64 characters.
	pemKey = func() string {
		body := make([]byte, 600)
		for i := range body {
			body[i] = byte(i*7 + 3)
		}
		b64 := base64.StdEncoding.EncodeToString(body)
		var b strings.Builder
		b.WriteString("-----BEGIN " + "RSA PRIVATE KEY-----\n")
		for len(b64) > 64 {
			b.WriteString(b64[:64] + "\n")
			b64 = b64[64:]
		}
		b.WriteString(b64 + "\n-----END " + "RSA PRIVATE KEY-----")
		return b.String()
	}()
	// jwt.io's example token.
	jwtTok = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	// Slack's documented example webhook.
	slackHook = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	// A Discord webhook: a snowflake id and a 68-character token.
	discordHook = "https://discord.com/api/webhooks/" + "1234567890123456789/" + strings.Repeat("aB3_-xYz9Q", 6) + "Lm0pQr7s"
	// AWS's documented example key pair.
	awsID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
)

// Each pattern, with a real-format example, and what must be left alone.
func TestRedactorPatterns(t *testing.T) {
	pemLines := strings.Count(pemKey, "\n")
	type tc struct{ name, in, want string }
	for _, c := range []tc{
		{"PEM private key", "key:\n" + pemKey + "\nloaded", "key:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----" + strings.Repeat("\n", pemLines) + "\nloaded"},
		{"PKCS#8 and OpenSSH labels", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY----- -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUA\n-----END OPENSSH PRIVATE KEY-----",
			"-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----\n\n -----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----\n\n"},
		{"PEM block cut before its end", "x " + pemKey[:200], "x -----BEGIN RSA PRIVATE KEY-----[REDACTED]" + strings.Repeat("\n", strings.Count(pemKey[:200], "\n"))},
		{"JWT", "token=" + jwtTok + "&x=1", "token=eyJ[REDACTED]&x=1"},
		{"Authorization header, Bearer", `curl -H "Authorization: Bearer 0123abcdEFGH.ijkl" https://x`, `curl -H "Authorization: Bearer [REDACTED]" https://x`},
		{"Authorization header, Basic", "authorization: Basic dXNlcjpwYXNzd29yZA==\n", "authorization: Basic [REDACTED]\n"},
		{"Authorization as a Python dict", `{'Authorization': 'token 1234567890abcdef'}`, `{'Authorization': 'token [REDACTED]'}`},
		{"Bearer alone", "sent bearer 9f8e7d6c5b4a3210 to the server", "sent bearer [REDACTED] to the server"},
		{"URL user-info", "clone https://user:p4ss%40word@github.com/o/r.git", "clone https://[REDACTED]@github.com/o/r.git"},
		{"URL user-info, empty user", "REDIS_URL=redis://:hunter2hunter2@localhost:6379/0", "REDIS_URL=redis://[REDACTED]@localhost:6379/0"},
		{"database URL", "postgres://admin:s3cr3t@db:5432/x", "postgres://[REDACTED]@db:5432/x"},
		{"Slack webhook", "posting to " + slackHook + " failed", "posting to https://hooks.slack.com/services/[REDACTED] failed"},
		{"Discord webhook", discordHook + "?wait=true", "https://discord.com/api/webhooks/[REDACTED]?wait=true"},
		{"AWS key pair", awsID + " " + awsSecret, "AKIA[REDACTED] [REDACTED]"},
		{"AWS key pair, CSV", awsID + "," + awsSecret + "\n", "AKIA[REDACTED],[REDACTED]\n"},
		{"AWS credentials file", "aws_secret_access_key = " + awsSecret + "\n", "aws_secret_access_key = [REDACTED]\n"},
		{"AWS JSON", `"SecretAccessKey": "` + awsSecret + `",`, `"SecretAccessKey": "[REDACTED]",`},
		// Left alone.
		{"bearer in a sentence", "the bearer of bad news; Bearer authentication", "the bearer of bad news; Bearer authentication"},
		{"a redacted credential stays", "Authorization: Bearer $GITHUB_TOKEN https://[REDACTED]@h", "Authorization: Bearer $GITHUB_TOKEN https://[REDACTED]@h"},
		{"URLs without a password", "https://github.com/o/r git@github.com:o/r http://127.0.0.1:8000/v1 ssh://git@host/r", "https://github.com/o/r git@github.com:o/r http://127.0.0.1:8000/v1 ssh://git@host/r"},
		{"a certificate", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"short eyJ", "eyJhbGci.eyJzdWIi.x", "eyJhbGci.eyJzdWIi.x"},
		{"a key id alone", awsID + " in use", "AKIA[REDACTED] in use"},
		{"Slack and Discord pages", "https://hooks.slack.com/services/ https://discord.com/api/webhooks/123", "https://hooks.slack.com/services/ https://discord.com/api/webhooks/123"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NewRedactor(nil).String(c.in); got != c.want {
				t.Errorf("String(%q)\n = %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

// A secret's value is found in every form Actions masks it in: as it is,
// JSON-escaped (a log printing JSON), URL-encoded, and a line at a time.
func TestRedactorValueForms(t *testing.T) {
	pass := `p&ss "w/rd" <x>+100%`
	multi := "first-line-of-it\n  second-line-of-it\nab"
	r := newRedactor([]Secret{{"DB_PASSWORD", pass}, {"SSH_PRIVATE", multi}})
	js, _ := json.Marshal(pass)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(pass)
	for _, c := range []struct{ name, in, want string }{
		{"as it is", "pw=" + pass + ";", "pw=$DB_PASSWORD;"},
		{"JSON-escaped in a log line", `INFO body={"password": ` + string(js) + `}`, `INFO body={"password": "$DB_PASSWORD"}`},
		{"JSON-escaped without HTML escaping", `x ` + strings.TrimSpace(plain.String()), `x "$DB_PASSWORD"`},
		{"URL-encoded (EscapeDataString)", "?p=" + escapeData(pass) + "&q=1", "?p=$DB_PASSWORD&q=1"},
		{"URL-encoded (query)", "?p=" + url.QueryEscape(pass), "?p=$DB_PASSWORD"},
		{"a whole multi-line value", "k=" + multi + ".", "k=$SSH_PRIVATE\n\n."},
		{"one line of it", "got second-line-of-it only", "got $SSH_PRIVATE only"},
		{"a short line of it is not a secret", "ab", "ab"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := r.String(c.in); got != c.want {
				t.Errorf("String(%q)\n = %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestIsSecretName(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		// Today's suffixes.
		{"MY_TOKEN", true}, {"client_secret", true}, {"OPENAI_KEY", true}, {"DB_PASSWORD", true},
		// The wider rule: anywhere in the name.
		{"HF_TOKEN_FILE", true}, {"GHTOKEN", true}, {"SECRET_VALUE", true}, {"MYSQL_PASSWD", true}, {"WANDB_API_KEY_V2", true},
		{"AWS_ACCESS_KEY_ID", true}, {"GOOGLE_APPLICATION_CREDENTIALS", true}, {"SSH_PRIVATE_KEY_B64", true}, {"BASIC_AUTH", true}, {"OAUTH_CLIENT", true},
		{"tokenizer_token", true}, // TOKENIZER is not, but _TOKEN is
		// Look-alikes.
		{"PATH", false}, {"TOKENIZERS_PARALLELISM", false}, {"MAX_NUM_BATCHED_TOKENS", false}, {"KVCACHED_MAX_CACHED_TOKENS", false},
		{"GIT_AUTHOR_NAME", false}, {"KVCACHED_AUTOPATCH", false}, {"KEYBOARD", false}, {"CUDA_VISIBLE_DEVICES", false},
	} {
		if got := IsSecretName(c.name); got != c.want {
			t.Errorf("IsSecretName(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	got := EnvSecrets(envOf("HF_TOKEN", "hf_abcdefgh", "SERVICE_AUTH_HEADER", "X-Auth-0123456789", "TOKENIZERS_PARALLELISM", "false", "DB_PASSWORD", "short", "MAX_TOKEN_BUDGET", "1234567890", "ENABLE_KVCACHED", "true"))
	want := []Secret{{"HF_TOKEN", "hf_abcdefgh"}, {"SERVICE_AUTH_HEADER", "X-Auth-0123456789"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("EnvSecrets = %v, want %v", got, want)
	}
}

func envOf(kv ...string) Env {
	var e Env
	for i := 0; i+1 < len(kv); i += 2 {
		e.Set(kv[i], kv[i+1])
	}
	return e
}

// A JSON text is redacted as its strings decode, whatever wrote it: every
// escape a writer may choose hides nothing.
func TestRedactorJSONAnyWriter(t *testing.T) {
	pass := "hunter2hunter2"
	r := newRedactor([]Secret{{"DB_PASSWORD", pass}})
	for _, c := range []struct{ name, in, want string }{
		{"Python's ensure_ascii \\u escapes", `{"log": "pw \u0068unter2hunter2 ok"}`, `{"log": "pw $DB_PASSWORD ok"}`},
		{"an escaped solidus", `{"url": "https:\/\/u:x@h\/p"}`, `{"url": "https://[REDACTED]@h/p"}`},
		{"a PEM block with \\n escapes", `{"k": ` + mustQuote(pemKey) + `, "n": 1}`, `{"k": "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----` + strings.Repeat(`\n`, strings.Count(pemKey, "\n")) + `", "n": 1}`},
		{"a key", `{"hunter2hunter2": [true, null]}`, `{"$DB_PASSWORD": [true, null]}`},
		{"HTML-escaped Authorization", `{"h":"\u003cAuthorization: Bearer abc123456789\u003e"}`, `{"h":"<Authorization: Bearer [REDACTED]>"}`},
		{"outside strings: nothing", `[1, 2, {"a": "b"}]`, `[1, 2, {"a": "b"}]`},
		{"not JSON: a string never ends", `{"a": "pw hunter2hunter2`, `{"a": "pw $DB_PASSWORD`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := string(r.JSON([]byte(c.in)))
			if got != c.want {
				t.Errorf("JSON(%s)\n = %s\nwant %s", c.in, got, c.want)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(got)) {
				t.Errorf("valid JSON became invalid: %s", got)
			}
		})
	}
}

func mustQuote(s string) string {
	b, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// The streaming writer finds what Bytes finds, however the text is split
// into writes.
func TestRedactWriterPatternsSplit(t *testing.T) {
	text := "start " + pemKey + "\nAuthorization: Bearer 0123abcdEFGH\n" + jwtTok + " " + slackHook + " " + awsID + " " + awsSecret + "\nhttps://u:pw@h " + discordHook + "\nend\n"
	r := NewRedactor(nil)
	want := r.String(text)
	if strings.Contains(want, "0123abcdEFGH") || strings.Contains(want, awsSecret) {
		t.Fatalf("Bytes left a secret: %s", want)
	}
	for _, size := range []int{1, 2, 3, 7, 64, 1000} {
		var buf bytes.Buffer
		w := r.Writer(&buf)
		for i := 0; i < len(text); i += size {
			w.Write([]byte(text[i:min(len(text), i+size)]))
		}
		w.Close()
		if buf.String() != want {
			t.Errorf("writes of %d bytes:\n%q\nwant\n%q", size, buf.String(), want)
		}
	}
}

// FuzzRedactJSON: whatever the JSON text, JSON keeps it valid and leaves
// no secret in it, however its strings escape it; and what it gives decodes
// as String redacts each decoded string. (FuzzRedactorWriter holds the
// streaming writer to Bytes.)
func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"a": "hunter2\nhunter2hunter2 \u0068unter2hunter2"}`)
	f.Add(`["Authorization: Bearer 0123abcdEFGH", "https:\/\/u:pw@h"]`)
	r := newRedactor([]Secret{{"DB_PASSWORD", "hunter2hunter2"}})
	f.Fuzz(func(t *testing.T, text string) {
		if !json.Valid([]byte(text)) {
			return
		}
		out := r.JSON([]byte(text))
		if !json.Valid(out) {
			t.Fatalf("JSON made %q of valid %q", out, text)
		}
		var in, got any
		json.Unmarshal([]byte(text), &in)
		json.Unmarshal(out, &got)
		// A run of invalid UTF-8 in a string JSON rewrote reads as one
		// U+FFFD (validUTF8), a decoder's as one a byte.
		same := func(v any) string { return regexp.MustCompile("\uFFFD+").ReplaceAllString(fmt.Sprint(v), "\uFFFD") }
		if want := redactValue(r, in); same(want) != same(got) {
			t.Errorf("JSON(%q) decodes as %v, want %v", text, got, want)
		}
		if strings.Contains(fmt.Sprint(got), "hunter2hunter2") {
			t.Errorf("JSON left the secret: %q", out)
		}
	})
}

// redactValue is v, a decoded JSON value, with String applied to every
// string, keys included.
func redactValue(r *Redactor, v any) any {
	switch v := v.(type) {
	case string:
		return r.String(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(r, e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[r.String(k)] = redactValue(r, e)
		}
		return out
	}
	return v
}

// TestAnchorFindsTheFirst holds patternMatcher.anchor, which reads two
// bytes at a time, to the first anchor that bytes.Index finds, from every
// position of texts made of anchors, their pieces and filler.
func TestAnchorFindsTheFirst(t *testing.T) {
	var pieces []string
	for _, pt := range patterns {
		for _, a := range pt.anchors {
			pieces = append(pieces, a, a[:1], a[:2], a[1:], a[len(a)-2:])
		}
	}
	pieces = append(pieces, " ", "x", "\n", `"`)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		buf := []byte(b.String())
		for i := 0; i <= len(buf); i++ {
			want := -1
			for _, pt := range patterns {
				for _, a := range pt.anchors {
					if j := bytes.Index(buf[i:], []byte(a)); j >= 0 && (want < 0 || i+j < want) {
						want = i + j
					}
				}
			}
			if got := (patternMatcher{}).anchor(buf, i); got != want {
				t.Fatalf("anchor(%q, %d) = %d, want %d", buf, i, got, want)
			}
		}
	}
}
