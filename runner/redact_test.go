package runner

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/engine"
)

// Secrets planted in what a run writes: the environment's values (one with
// characters that JSON and Markdown escape) and token shapes the environment
// does not hold, as a server may print them. Each is listed by a fragment
// that only it holds and no escaping changes.
var runSecrets = []struct{ text, fragment string }{
	{"ghs_" + "EnvGitHubTokenValue0123456789abcdefgh", "EnvGitHubTokenValue0123456789"},
	{`hfEnvTokenValue<&>"x"\y`, "hfEnvTokenValue"},
	{`apiKeyValue0123&<"q">`, "apiKeyValue0123"},
	{"ghp_" + "PlantedClassicPersonalToken012345678", "PlantedClassicPersonalToken"},
	{"github_pat_" + "11PLANTEDFINEGRAINED00_" + strings.Repeat("aB3", 20), "11PLANTEDFINEGRAINED00"},
	{"hf_" + "PlantedHuggingFaceTokenLettersOnly", "PlantedHuggingFaceTokenLettersOnly"},
}

// TestRunKeepsSecretsOutOfThePart: a check detail, a case log and a
// serve.log line holding every secret leave none of them in any file of the
// part or in the job summary, whichever way the file escapes them.
func TestRunKeepsSecretsOutOfThePart(t *testing.T) {
	plan, _ := mustPlan(t, "nightly").Select(Selection{Cases: []string{"vllm-qwen05b-kv_c1"}})
	var line []string
	for _, s := range runSecrets {
		line = append(line, s.text)
	}
	leak := "serve.log: Authorization: " + strings.Join(line, " | ")
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			writeServeLog(t, c, leak[:17], leak[17:]+"\n")
			return c.Result([]collect.Check{{Name: "server_ready", Detail: leak}}, map[string]any{"errors": []string{leak}}, nil)
		}),
	})
	f.env["GITHUB_TOKEN"] = runSecrets[0].text
	f.env["HF_TOKEN"] = runSecrets[1].text
	f.env["MY_SERVICE_API_KEY"] = runSecrets[2].text
	// What the CLI passes: every variable named like a secret.
	f.r.Redact = collect.NewRedactor(f.r.Getenv, collect.SecretNames([]string{"MY_SERVICE_API_KEY=" + runSecrets[2].text})...)
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	filepath.WalkDir(f.r.OutDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[p], _ = os.ReadFile(p)
		}
		return nil
	})
	files["$GITHUB_STEP_SUMMARY"], _ = os.ReadFile(f.env["GITHUB_STEP_SUMMARY"])
	for _, name := range []string{"cases.jsonl", "summary.json", "summary.md", "vllm-qwen05b-kv_c1/serve.log"} {
		if files[filepath.Join(f.r.OutDir, name)] == nil {
			t.Fatalf("the run wrote no %s", name)
		}
	}
	for name, data := range files {
		for _, s := range runSecrets {
			if bytes.Contains(data, []byte(s.fragment)) {
				t.Errorf("%s holds %q:\n%s", name, s.fragment, data)
			}
		}
	}
	// As Markdown escapes it (docs/formats.md §5).
	if !bytes.Contains(files[filepath.Join(f.r.OutDir, "summary.md")], []byte(`\$MY\_SERVICE\_API\_KEY`)) {
		t.Errorf("summary.md does not name the redacted key:\n%s", files[filepath.Join(f.r.OutDir, "summary.md")])
	}
}

// A secret-named variable the plan gives an engine or a server is a secret
// of the run: setup.json, which shows the engine's env, and serve.log, where
// the server may print it, hold its name instead of its value.
func TestRunRedactsThePlanEnvSecrets(t *testing.T) {
	plan, _ := mustPlan(t, "nightly").Select(Selection{Cases: []string{"vllm-qwen05b-kv_c1"}})
	engineSecret, serverSecret := "wandb-0123456789abcdef", "S3rv1ceCredentialValue"
	e, _ := plan.Engines.Get("vllm")
	e.Env = collect.Env{}
	e.Env.Set("WANDB_API_KEY", engineSecret)
	e.Env.Set("TOKENIZERS_PARALLELISM", "false")
	plan.Engines.Set("vllm", e)
	for i := range plan.Cases {
		for j := range plan.Cases[i].Servers {
			plan.Cases[i].Servers[j].Env.Set("SERVICE_CREDENTIALS", serverSecret)
		}
	}
	f := newFakeRun(t, plan, map[string]Kind{
		KindSetup: Kind(passing),
		KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
			writeServeLog(t, c, "env: "+engineSecret+" "+serverSecret+"\n")
			return c.Result([]collect.Check{{Name: "server_ready", Detail: "saw " + serverSecret}}, nil, nil)
		}),
	})
	if _, err := f.r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	setup, err := os.ReadFile(filepath.Join(f.r.OutDir, "setup.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(setup, []byte(`"WANDB_API_KEY": "$WANDB_API_KEY"`)) || !bytes.Contains(setup, []byte(`"TOKENIZERS_PARALLELISM": "false"`)) {
		t.Errorf("setup.json's engine env is not redacted as expected:\n%s", setup)
	}
	filepath.WalkDir(f.r.OutDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, s := range []string{engineSecret, serverSecret} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q:\n%s", p, s, data)
			}
		}
		return nil
	})
}

// An excerpt's lines are redacted together, as the log they come from: a
// secret value of two lines, and a PEM block, are redacted in both halves
// and every line, and each line stays where it was.
func TestExcerptRedactsAcrossLines(t *testing.T) {
	key := "-----BEGIN " + "EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49\nAwEHoUQDQgAEPR3tU2Fu0ZsbLQ0eXr2GzJ5F1/hnfc0bE8rZw2rF0Pyu1eXlA==\n-----END " + "EC PRIVATE KEY-----"
	two := "first-half-of-it\nsecond-half-of-it"
	r := &Runner{OutDir: t.TempDir(), Redact: collect.NewRedactor(nil).With(collect.Secret{Name: "SPLIT_SECRET", Value: two})}
	s := &Server{Server: &engine.Server{Config: engine.ServerConfig{Dir: filepath.Join(r.OutDir, "srv")}}}
	lines := strings.Split("start\n"+key+"\nvalue "+two+" end", "\n")
	ex := r.finishExcerpt(s, collect.Excerpt{From: collect.ExcerptEnd, Lines: lines})
	if ex == nil {
		t.Fatal("no excerpt")
	}
	if len(ex.Lines) != len(lines) {
		t.Fatalf("%d lines, want %d: %q", len(ex.Lines), len(lines), ex.Lines)
	}
	all := strings.Join(ex.Lines, "\n")
	for _, leak := range []string{"MHcCAQEEIIrYSSNQ", "AwEHoUQDQgAE", "first-half", "second-half"} {
		if strings.Contains(all, leak) {
			t.Errorf("the excerpt holds %q:\n%s", leak, all)
		}
	}
	if ex.Lines[0] != "start" || ex.Lines[len(ex.Lines)-1] != " end" {
		t.Errorf("lines moved: %q", ex.Lines)
	}
}

// writeServeLog writes the case's serve.log as engine.Start writes a
// server's output: through the run's redactor, a write a piece.
func writeServeLog(t *testing.T, c *Case, pieces ...string) {
	dir := filepath.Join(c.R.OutDir, c.Entry.Name)
	os.MkdirAll(dir, 0o755)
	lf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	w := c.R.Redactor().Writer(lf)
	for _, p := range pieces {
		w.Write([]byte(p))
	}
	w.Close()
}
