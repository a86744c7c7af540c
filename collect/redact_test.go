package collect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Planted tokens of every shape, none of them held by the environment.
var (
	tokGHP = "ghp_" + "R4nd0mB0dyOfAClassicPAT0123456789abc"   // 36 after the prefix
	tokGHS = "ghs_" + "Actions1nstallati0nT0kenBody0123456789" // 38
	tokGHO = "gho_" + "0AuthAccessT0kenBodyIsThirtySixChars"   // 36
	tokGHU = "ghu_" + "UserToServerTokenBodyIsThirtySix0000"   // 36
	tokGHR = "ghr_" + "RefreshTokenBodyThatIsThirtySixChars0"  // 37
	tokPAT = "github_pat_" + "11ABCDEFG0123456789abc_" + strings.Repeat("Xy9", 19) + "Zz"
	tokHF  = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi" // 34 letters
	tokJWT = "ghs_" + "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJnaXRodWIifQ.c2lnbmF0dXJlX29mX3RoZV90b2tlbg"
)

func TestRedactorShapes(t *testing.T) {
	type tc struct{ name, in, want string }
	for _, c := range []tc{
		{"classic PAT", "token=" + tokGHP + " end", "token=ghp_[REDACTED] end"},
		{"Actions token", "token: " + tokGHS, "token: ghs_[REDACTED]"},
		{"OAuth, user, refresh", tokGHO + "," + tokGHU + "," + tokGHR, "gho_[REDACTED],ghu_[REDACTED],ghr_[REDACTED]"},
		{"fine-grained PAT", "x" + tokPAT + "\n", "xgithub_pat_[REDACTED]\n"},
		{"Hugging Face", "HF token " + tokHF + ".", "HF token hf_[REDACTED]."},
		{"stateless JWT ghs_ and its full stop", "used " + tokJWT + ".", "used ghs_eyJ[REDACTED]."}, // the JWT pattern runs first
		{"inside a word and a URL", "https://x" + tokGHP + "@github.com/o/r", "https://xghp_[REDACTED]@github.com/o/r"},
		{"Markdown-escaped stays long enough", "run " + tokHF + "_more", "run hf_[REDACTED]_more"},
		// Ordinary words and identifiers are never taken.
		{"hf identifiers", "hf_model hf_hub_download hf_transfer HF_TOKEN use_hf_xet", "hf_model hf_hub_download hf_transfer HF_TOKEN use_hf_xet"},
		{"hf_ with a commit id", "hf_7ae557604adf67be50417f59c2c2f167def9a775", "hf_7ae557604adf67be50417f59c2c2f167def9a775"},
		{"hf_ one letter short", "hf_" + strings.Repeat("a", 33), "hf_" + strings.Repeat("a", 33)},
		{"ghp_ one short", "ghp_" + strings.Repeat("a", 35), "ghp_" + strings.Repeat("a", 35)},
		{"github_pat_ short", "github_pat_token_env", "github_pat_token_env"},
		{"capital prefix", "GHP_" + strings.Repeat("a", 40), "GHP_" + strings.Repeat("a", 40)},
		{"our replacement is stable", "$GITHUB_TOKEN ghs_[REDACTED]", "$GITHUB_TOKEN ghs_[REDACTED]"},
		// gitleaks' shapes (collect/redact.go cites the rules).
		{"OpenAI project key", "OPENAI: sk-proj-" + strings.Repeat("Ab1_-", 12) + "T3BlbkFJ" + strings.Repeat("x", 58) + " done", "OPENAI: sk-proj-[REDACTED] done"},
		{"OpenAI service account and admin", "sk-svcacct-" + strings.Repeat("a", 58) + " sk-admin-" + strings.Repeat("B", 58), "sk-svcacct-[REDACTED] sk-admin-[REDACTED]"},
		{"OpenAI legacy key", "key sk-" + strings.Repeat("a", 20) + "T3BlbkFJ" + strings.Repeat("b", 20), "key sk-[REDACTED]"},
		{"Anthropic keys", "sk-ant-api03-" + strings.Repeat("a-_1", 23) + "bAA;sk-ant-admin01-" + strings.Repeat("Z", 93) + "AA", "sk-ant-api03-[REDACTED];sk-ant-admin01-[REDACTED]"},
		{"AWS access key ids", "AKIAIOSFODNN7EXAMPLE ASIAY34FZKBOKMUTVV7A ABIA" + strings.Repeat("Q", 16) + " ACCA" + strings.Repeat("2", 16), "AKIA[REDACTED] ASIA[REDACTED] ABIA[REDACTED] ACCA[REDACTED]"},
		{"Slack tokens", "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD xoxp-41684372915-1320496754 xoxa-2-abcdefgh", "xoxb-[REDACTED] xoxp-[REDACTED] xoxa-[REDACTED]"},
		{"GitLab, npm, PyPI, Google", "glpat-" + strings.Repeat("x", 20) + " npm_" + strings.Repeat("a1", 18) + " pypi-AgEIcHlwaS5vcmc" + strings.Repeat("0f", 32) + " AIza" + strings.Repeat("S-y_", 9),
			"glpat-[REDACTED] npm_[REDACTED] pypi-AgEIcHlwaS5vcmc[REDACTED] AIza[REDACTED]"},
		// Ordinary text with the same beginnings is left alone.
		{"sk- words", "sk-learn scikit-learn task-1 risk-free sk-proj-short sk-ant-api03-short", "sk-learn scikit-learn task-1 risk-free sk-proj-short sk-ant-api03-short"},
		{"AKIA too short, lower case", "AKIA123 AKIAIOSFODNN7 akiaiosfodnn7example1", "AKIA123 AKIAIOSFODNN7 akiaiosfodnn7example1"},
		{"npm and pypi identifiers", "npm_config_cache npm_package_version pypi-simple pypi-AgEIcHlwaS5vcmc", "npm_config_cache npm_package_version pypi-simple pypi-AgEIcHlwaS5vcmc"},
		{"xox and AIza words", "xoxb-1 xoxo AIzaWord glpat-short", "xoxb-1 xoxo AIzaWord glpat-short"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := NewRedactor(nil)
			if got := r.String(c.in); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	// A run longer than maxShapeLen is redacted up to it, the rest left.
	long := "ghp_" + strings.Repeat("a", 2000)
	if got := NewRedactor(nil).String(long); got != "ghp_[REDACTED]"+strings.Repeat("a", 2000+4-maxShapeLen) {
		t.Errorf("long run: %d bytes left", len(got))
	}
	// nil and the zero value redact nothing.
	var zero Redactor
	if (*Redactor)(nil).String(tokGHP) != tokGHP || zero.String(tokGHP) != tokGHP {
		t.Error("nil or zero Redactor redacted")
	}
}

func TestSecretNames(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "GITHUB_TOKEN=ghs_x", "MY_API_KEY=0123456789", "short_secret=abc", "Deploy_Password=hunter2hunter2",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "KVCACHED_MAX_CACHED_TOKENS=4096000000", "NOEQUALS", "A_TOKEN=",
		"MY_API_KEY=duplicate-entry",
	}
	// KVCACHED_MAX_CACHED_TOKENS holds TOKEN but as TOKENS, and its value
	// is a number: neither makes it a secret.
	want := append(append([]string(nil), SecretEnvNames...), "AWS_SECRET_ACCESS_KEY", "Deploy_Password", "MY_API_KEY")
	if d := cmp.Diff(want, SecretNames(environ)); d != "" {
		t.Fatal(d)
	}
	if d := cmp.Diff(SecretEnvNames, SecretNames(nil)); d != "" {
		t.Fatal(d)
	}
}

// A secret's value is found however the text holds it: as it is, and inside
// JSON strings as encoding/json escapes it, with or without HTML escaping.
func TestRedactorJSON(t *testing.T) {
	secret := `s3cretVALUE&<b>"q"\x`
	env := map[string]string{"MY_API_KEY": secret, "GH_TOKEN": "nb"}
	r := NewRedactor(func(k string) string { return env[k] }, "MY_API_KEY", "GH_TOKEN")
	type doc struct {
		Name   string            `json:"name"`
		Detail string            `json:"detail"`
		Keys   map[string]string `json:"keys"`
		N      []int             `json:"n"`
	}
	in := doc{Name: "a\nb", Detail: "value " + secret + " and " + tokGHS, Keys: map[string]string{secret: "nb"}, N: []int{1}}
	html, _ := json.Marshal(in)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(in)
	for name, data := range map[string][]byte{"html-escaped": html, "plain": b.Bytes()} {
		t.Run(name, func(t *testing.T) {
			out := r.JSON(data)
			var got doc
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("redacted JSON does not parse: %v\n%s", err, out)
			}
			// "nb" is a secret too: replaced where a string holds it, never
			// across the escape of "a\nb" (the JSON text a\nb), which would
			// leave an invalid escape.
			want := doc{Name: "a\nb", Detail: "value $MY_API_KEY and ghs_[REDACTED]", Keys: map[string]string{"$MY_API_KEY": "$GH_TOKEN"}, N: []int{1}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s\n%s", d, out)
			}
			if bytes.Contains(out, []byte("s3cretVALUE")) {
				t.Errorf("secret left in %s", out)
			}
		})
	}
	// A variable's name may hold a quote or a backslash: the name that
	// replaces its value inside a JSON string is escaped, so the JSON stays
	// valid and reads back as the name.
	odd := `A"B\C_TOKEN`
	ro := NewRedactor(func(k string) string { return map[string]string{odd: "0123456789abc"}[k] }, SecretNames([]string{odd + "=0123456789abc"})...)
	out := ro.JSON([]byte(`{"log":"key 0123456789abc here"}`))
	var got struct{ Log string }
	if err := json.Unmarshal(out, &got); err != nil || got.Log != "key $"+odd+" here" {
		t.Errorf("JSON with a secret named %s: %s (%v)", odd, out, err)
	}
	plain := []byte(`{"k":"v"}`)
	if out := NewRedactor(nil).JSON(plain); &out[0] != &plain[0] {
		t.Error("JSON copied a text it did not change")
	}
}

// A streaming writer holds back only what may begin a secret, so a line is
// written out as soon as it ends: the runner waits for a ballast's ready line
// in serve.log while the ballast runs.
func TestRedactWriterWritesFinishedLines(t *testing.T) {
	r := NewRedactor(func(k string) string { return map[string]string{"HF_TOKEN": "hf_" + strings.Repeat("Y", 34)}[k] }, SecretEnvNames...)
	var buf bytes.Buffer
	w := r.Writer(&buf)
	for _, c := range []struct{ write, shown string }{
		{"ballast ready\n", "ballast ready\n"},
		{"token ", "ballast ready\ntoken "},
		{"g", "ballast ready\ntoken "},       // may start ghp_
		{"hf_ZZZ", "ballast ready\ntoken g"}, // not ghf_, but hf_ may be a token
		{strings.Repeat("Z", 31) + " ok\n", "ballast ready\ntoken ghf_[REDACTED] ok\n"},
		{"hf_" + strings.Repeat("Y", 34) + "\n", "ballast ready\ntoken ghf_[REDACTED] ok\n$HF_TOKEN\n"},
	} {
		w.Write([]byte(c.write))
		if buf.String() != c.shown {
			t.Fatalf("after writing %q: %q written, want %q", c.write, buf.String(), c.shown)
		}
	}
	w.Close()
}

// A streaming writer that learns more secrets redacts them from then on,
// in what it held back too, whether it had secret values before or none.
func TestRedactWriterLearns(t *testing.T) {
	env := map[string]string{"OLD_TOKEN": "old-0123456789secret"}
	for _, names := range [][]string{{"OLD_TOKEN"}, nil} {
		var buf bytes.Buffer
		w := NewRedactor(func(k string) string { return env[k] }, names...).Writer(&buf)
		w.Write([]byte("a old-0123456789sec"))
		w.Learn(Secret{Name: "WANDB_API_KEY", Value: "wandb-0123456789abcdef"})
		w.Write([]byte("ret and wandb-0123456789abcdef\n"))
		w.Close()
		want := "a $OLD_TOKEN and $WANDB_API_KEY\n"
		if names == nil {
			want = "a old-0123456789secret and $WANDB_API_KEY\n"
		}
		if buf.String() != want || w.Redactor().String("wandb-0123456789abcdef") != "$WANDB_API_KEY" {
			t.Errorf("secrets %v: %q written, want %q", names, buf.String(), want)
		}
	}
}

// naiveShapes is the shape redaction written the slow way: at every
// position, in order, the first shape that matches there.
func naiveShapes(s string) string {
	var b strings.Builder
	buf := []byte(s)
	for i := 0; i < len(buf); {
		if n, sh := shapeAt(buf, i); n > 0 {
			b.Write(sh.repl)
			i += n
			continue
		}
		b.WriteByte(buf[i])
		i++
	}
	return b.String()
}

// shapeNextByteByByte is shapeMatcher.next before it skipped what cannot
// hold a match: a pair lookup at every byte. FuzzShapeNextSkips holds the
// two equal.
func shapeNextByteByByte(buf []byte, i int) (int, int) {
	for p := i; p+1 < len(buf); p++ {
		if c := buf[p+1]; shapePairs[buf[p]][c>>6]&(1<<(c&63)) == 0 {
			continue
		}
		if n, _ := shapeAt(buf, p); n > 0 {
			return p, n
		}
	}
	return -1, 0
}

// FuzzShapeNextSkips: the skipping scan finds the same first match as a
// look at every byte, from every start, on the planted tokens cut and
// joined every way the fuzzer finds.
func FuzzShapeNextSkips(f *testing.F) {
	for _, tok := range []string{tokGHP, tokGHS, tokGHO, tokGHU, tokGHR, tokPAT, tokHF, tokJWT,
		"xoxb-" + "1234567890", "AKIA" + "ABCDEFGHIJKLMNOP", "glpat-" + strings.Repeat("a", 20)} {
		f.Add([]byte("x " + tok + " y"))
		f.Add([]byte(`{"name": "` + tok[:len(tok)-1] + `", "k": "` + tok + `."}`))
		f.Add([]byte(tok + tok))
	}
	f.Add([]byte(strings.Repeat("ab_", 40) + "ghp_"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := 0; i <= len(data); i++ {
			j, n, _ := shapeMatcher{}.next(data, i)
			wj, wn := shapeNextByteByByte(data, i)
			if j != wj || (j >= 0 && n != wn) {
				t.Fatalf("%q from %d: match at %d (%d bytes), want %d (%d)", data, i, j, n, wj, wn)
			}
		}
	})
}
