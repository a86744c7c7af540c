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
		KindSetup: KindFunc(passing),
		KindServer: KindFunc(func(ctx context.Context, c *Case) collect.CaseResult {
			dir := filepath.Join(c.R.OutDir, c.Entry.Name)
			os.MkdirAll(dir, 0o755)
			lf, err := os.Create(filepath.Join(dir, "serve.log"))
			if err != nil {
				t.Fatal(err)
			}
			// As engine.Start writes a server's output.
			w := c.R.Redactor().Writer(lf)
			w.Write([]byte(leak[:17]))
			w.Write([]byte(leak[17:] + "\n"))
			w.Close()
			lf.Close()
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
