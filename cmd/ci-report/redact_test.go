package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// plantedSecrets are what TestNoSecretInAnyOutput plants in an artifact
// tree: the environment's values (the GitHub token postFake accepts, a
// Hugging Face token and an API key with characters that Markdown, HTML and
// JSON escape) and one token of each shape that the environment does not
// hold. Each is found in an output by a fragment that only it holds and no
// escaping changes (no '_', no punctuation).
var plantedSecrets = []struct{ text, fragment string }{
	{postTestToken, "postTEST0123456789secret"},
	{`hfEnvValue*_<&>"x"\y`, "hfEnvValue"},
	{`apiKeyValue0123&<"q">_[x]`, "apiKeyValue0123"},
	{"ghp_" + "PlantedClassicPersonalToken012345678", "PlantedClassicPersonalToken"},
	{"gho_" + "PlantedOAuthTokenBody0123456789abcdef", "PlantedOAuthTokenBody"},
	{"ghu_" + "PlantedUserToServerToken0123456789ab", "PlantedUserToServerToken"},
	{"ghs_" + "PlantedServerToServerToken0123456789", "PlantedServerToServerToken"},
	{"ghr_" + "PlantedRefreshTokenBody0123456789abcd", "PlantedRefreshTokenBody"},
	{"github_pat_" + "11PLANTEDFINEGRAINED00_" + strings.Repeat("aB3", 20), "11PLANTEDFINEGRAINED00"},
	{"hf_" + "PlantedHuggingFaceTokenLettersOnly", "PlantedHuggingFaceTokenLettersOnly"},
	// The shapes of gitleaks' rules (collect/redact.go cites them).
	{"sk-proj-" + "PlantedOpenAIProjectKey" + "0123456789abcdefghij_ABCDEFGHIJ-0123456789", "PlantedOpenAIProjectKey"},
	{"sk-" + "PlantedOpenAILegacyKey" + "T3BlbkFJ" + "abcdefghij0123456789", "PlantedOpenAILegacyKey"},
	{"sk-ant-api03-" + "PlantedAnthropicKey" + strings.Repeat("a1B2-_", 13) + "AA", "PlantedAnthropicKey"},
	{"AKIA" + "PLANTEDAWSKEY234", "PLANTEDAWSKEY234"},
	{"ASIA" + "PLANTEDSTSKEY567", "PLANTEDSTSKEY567"},
	{"xoxb-" + "1234567890-" + "PlantedSlackBot", "PlantedSlackBot"},
	{"glpat-" + "PlantedGitLabToken012345", "PlantedGitLabToken"},
	{"npm_" + "PlantedNpmToken" + "abcdefghij0123456789z", "PlantedNpmToken"},
	{"pypi-AgEIcHlwaS5vcmc" + "PlantedPyPIToken" + "0123456789abcdefghij0123456789abcdefghij", "PlantedPyPIToken"},
	{"AIza" + "PlantedGoogleKey" + "0123456789abcdefghi", "PlantedGoogleKey"},
}

// leakyTree copies the vLLM part of the nightly-fail tree and plants every
// secret in a serve.log line quoted by a check detail and the case log, a
// case name, setup values (GPU, engine image, a case's env and flags), the
// part's name, a bad part.json and the commit subject.
func leakyTree(t *testing.T) (dir, subject string) {
	t.Helper()
	var all []string
	for _, s := range plantedSecrets {
		all = append(all, s.text)
	}
	line := strings.Join(all, " ")
	src := treePath("nightly-fail", "vllm")
	// The part's name (its directory's, part.json being unreadable) holds
	// a token too: it is in the part lines and in the listed problems.
	dir = filepath.Join(t.TempDir(), "vllm-"+plantedSecrets[4].text)
	os.MkdirAll(dir, 0o755)
	edit := func(name string, v any, change func()) {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		change()
		// Written as an older runner or a hand-made tree would: unredacted.
		out, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, name), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "part.json"), []byte(`{"format": 1, "complete": "`+plantedSecrets[6].text+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var setup collect.Setup
	edit("setup.json", &setup, func() {
		setup.GPUs[0].Name += " " + line
		for _, k := range setup.Engines.Keys() {
			e, _ := setup.Engines.Get(k)
			e.Image += "-" + plantedSecrets[3].text
			setup.Engines.Set(k, e)
		}
		setup.Cases[0].Env.Set("HF_TOKEN", plantedSecrets[1].text)
		setup.Cases[0].ExtraArgs = append(setup.Cases[0].ExtraArgs, "--api-key", line)
	})
	var sum collect.Summary
	edit("summary.json", &sum, func() {
		logLine := "serve.log: INFO Authorization: Bearer " + line
		logJSON, _ := json.Marshal(map[string]any{"errors": []string{logLine}, "patched": []string{line}})
		sum.Cases = append(sum.Cases, collect.CaseResult{
			Name:   "vllm-leak-" + plantedSecrets[9].text,
			Checks: []collect.Check{{Name: "no_error_signatures", Detail: logLine}, {Name: "key_" + plantedSecrets[5].text, Detail: "see " + line}},
			Log:    logJSON,
		})
	})
	return dir, "Fix auth (" + line + ")"
}

// secretsEnv is the environment of the test: the values, with the API key
// only in Environ (found by its name's _KEY).
func secretsEnv(vars map[string]string) (*env, *bytes.Buffer, *bytes.Buffer) {
	vars["GITHUB_TOKEN"] = plantedSecrets[0].text
	vars["HF_TOKEN"] = plantedSecrets[1].text
	vars["MY_SERVICE_API_KEY"] = plantedSecrets[2].text
	var out, errb bytes.Buffer
	return &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			var kv []string
			for k, v := range vars {
				kv = append(kv, k+"="+v)
			}
			return kv
		},
	}, &out, &errb
}

// TestNoSecretInAnyOutput: secrets planted in every kind of artifact text
// reach no output of merge (merged.json, an uploaded artifact, and its
// warnings), render (comment, section, PR comment, HTML preview,
// terminal tables, job summary, stdout and stderr) or post (the comment and
// issue body sent to GitHub, the dry run's requests, the job summary,
// stdout and stderr), in no escaped form either.
func TestNoSecretInAnyOutput(t *testing.T) {
	tree, subject := leakyTree(t)
	work := t.TempDir()
	outputs := map[string]string{}
	readOut := func(name, path string) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outputs[name] = string(data)
	}
	run := func(name string, vars map[string]string, args ...string) {
		e, out, errb := secretsEnv(vars)
		var code int
		if args[0] == "post" {
			o := &postOptions{Sleep: func(context.Context, time.Duration) error { return nil }, SettleDelay: -1}
			code = exitCode(errb, "post", o.parseAndRun(context.Background(), e, args[1:]))
		} else {
			code = mainEnv(context.Background(), e, args)
		}
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s", name, code, errb)
		}
		outputs[name+" stdout"], outputs[name+" stderr"] = out.String(), errb.String()
	}
	base := []string{"--date", "2026-11-28", "--subject", subject}

	summary := filepath.Join(work, "render-step-summary.md")
	run("render", map[string]string{"GITHUB_STEP_SUMMARY": summary}, append([]string{"render", "--job-summary",
		"--comment", filepath.Join(work, "comment.md"), "--section", filepath.Join(work, "section.md"), "--html", filepath.Join(work, "preview.html"), tree}, base...)...)
	readOut("comment.md", filepath.Join(work, "comment.md"))
	readOut("section.md", filepath.Join(work, "section.md"))
	readOut("preview.html", filepath.Join(work, "preview.html"))
	readOut("render job summary", summary)
	merged := filepath.Join(work, "merged.json")
	run("merge", map[string]string{}, "merge", "--out", merged, tree)
	readOut("merged.json", merged)
	run("render merged.json", map[string]string{}, append([]string{"render", merged}, base...)...)
	run("render text", map[string]string{}, append([]string{"render", "--format", "text", tree}, base...)...)
	run("render pr", map[string]string{}, append([]string{"render", "--pr", "5", tree}, base...)...)
	run("render junit", map[string]string{}, append([]string{"render", "--format", "junit", tree}, base...)...)
	run("render ctrf", map[string]string{}, append([]string{"render", "--format", "ctrf", tree}, base...)...)

	// A JUnit report whose test printed and failed on every secret: the part
	// that import junit writes holds none of them.
	var line []string
	for _, sec := range plantedSecrets {
		line = append(line, sec.text)
	}
	esc := func(s string) string {
		var b bytes.Buffer
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	all := esc(strings.Join(line, " "))
	junitXML := `<testsuite name="s"><properties><property name="token" value="` + all + `"/></properties>` +
		`<testcase classname="c" name="t-` + esc(plantedSecrets[4].text) + `"><failure message="` + all + `" type="E">` + all + `</failure>` +
		`<system-out>` + all + `</system-out></testcase><system-err>` + all + `</system-err></testsuite>`
	junitFile := filepath.Join(work, "junit.xml")
	if err := os.WriteFile(junitFile, []byte(junitXML), 0o644); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(work, "imported")
	run("import junit", map[string]string{}, "import", "junit", junitFile, "--part", "pytest", "--out", imported)
	for _, name := range []string{"part.json", "setup.json", "summary.json", "summary.md", "run.log"} {
		readOut("imported "+name, filepath.Join(imported, name))
	}

	gh, srv := postFake(t, "<!-- ci-report:results-issue -->\nhand text\n")
	ghEnv := func(summary string) map[string]string {
		return map[string]string{"GITHUB_API_URL": srv.URL, "GITHUB_REPOSITORY": accRepo, "GITHUB_RUN_ID": "4242", "GITHUB_STEP_SUMMARY": summary}
	}
	dryLog := filepath.Join(work, "dry-step-summary.md")
	run("post --dry-run", ghEnv(dryLog), append([]string{"post", "--dry-run", "--job-summary", "--issue", "7", tree}, base...)...)
	readOut("dry-run job summary", dryLog)
	if !strings.Contains(outputs["post --dry-run stdout"], "PATCH /repos/"+accRepo+"/issues/7") {
		t.Fatalf("the dry run printed no requests:\n%s", outputs["post --dry-run stdout"])
	}
	postLog := filepath.Join(work, "post-step-summary.md")
	run("post", ghEnv(postLog), append([]string{"post", "--job-summary", "--issue", "7", tree}, base...)...)
	readOut("post job summary", postLog)
	body, comments := gh.issue(7).Body, gh.commentsOn(7)
	outputs["issue body on GitHub"] = body
	for _, c := range comments {
		outputs[fmt.Sprintf("comment %d on GitHub", c.ID)] = c.Body
	}
	if len(comments) != 1 || !strings.Contains(body, "gpu-ci:nightly:start") {
		t.Fatalf("post published %d comments, body:\n%s", len(comments), body)
	}

	for name, out := range outputs {
		for _, s := range plantedSecrets {
			// The fragment catches the text and all its escaped forms (ghs\_…,
			// \u003c, &lt;); the text and Plain's escape are named for clarity.
			for _, form := range []string{s.text, text.Plain(s.text), s.fragment} {
				if strings.Contains(out, form) {
					t.Errorf("%s holds %q", name, form)
					break
				}
			}
		}
	}
	// The documents still say where a secret was.
	for _, want := range []string{"$GITHUB\\_TOKEN", "$HF\\_TOKEN", "$MY\\_SERVICE\\_API\\_KEY", "ghp\\_\\[REDACTED\\]", "hf\\_\\[REDACTED\\]"} {
		if !strings.Contains(outputs["comment.md"], strings.ReplaceAll(want, "$", "\\$")) {
			t.Errorf("comment.md does not show %s:\n%s", want, outputs["comment.md"])
		}
	}
}

// setupEnvSecret is the value treeWithSetupEnvSecret puts in the vLLM
// part's setup.json env, under the secret-named WANDB_API_KEY.
const setupEnvSecret = "wandb-0123456789abcdef"

// treeWithSetupEnvSecret copies the nightly-fail tree with setupEnvSecret
// in its vLLM part's setup.json env, and returns the copy.
func treeWithSetupEnvSecret(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tree")
	mustDo(t, os.CopyFS(dir, os.DirFS(treePath("nightly-fail"))))
	setup := filepath.Join(dir, "vllm", "setup.json")
	data, err := os.ReadFile(setup)
	mustDo(t, err)
	data = bytes.Replace(data, []byte(`"env": {`), []byte(`"env": {"WANDB_API_KEY": "`+setupEnvSecret+`", `), 1)
	mustDo(t, os.WriteFile(setup, data, 0o644))
	return dir
}

// TestMergeRedactsTheSetupEnvSecrets: a part whose setup.json shows a
// secret-named variable of an engine's env (written before the runner
// redacted it, or by another tool) gives a merged.json, an uploaded
// artifact, without its value, wherever the value stands.
func TestMergeRedactsTheSetupEnvSecrets(t *testing.T) {
	const secret = setupEnvSecret
	dir := treeWithSetupEnvSecret(t)
	part := filepath.Join(dir, "vllm", "part.json")
	pj, err := os.ReadFile(part)
	mustDo(t, err)
	pj = bytes.Replace(pj, []byte(`"host": "`), []byte(`"host": "`+secret+` `), 1)
	mustDo(t, os.WriteFile(part, pj, 0o644))
	out := filepath.Join(t.TempDir(), "merged.json")
	if code, _, stderr := runCLI(t, "merge", "--out", out, dir); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	merged, err := os.ReadFile(out)
	mustDo(t, err)
	if bytes.Contains(merged, []byte(secret)) || !bytes.Contains(merged, []byte(`$WANDB_API_KEY`)) {
		t.Errorf("merged.json holds the engine env's secret, or not its name")
	}
}

// TestPostRedactsTheSetupEnvSecrets: post's own stderr, streamed from
// before the report is read, hides the secrets setup.json's env shows
// too: here a part's problem line that carries one.
func TestPostRedactsTheSetupEnvSecrets(t *testing.T) {
	const secret = setupEnvSecret
	dir := treeWithSetupEnvSecret(t)
	summary := filepath.Join(dir, "vllm", "summary.json")
	data, err := os.ReadFile(summary)
	mustDo(t, err)
	data = bytes.Replace(data, []byte(`{`), []byte(`{"problems": ["login with `+secret+` refused"], `), 1)
	mustDo(t, os.WriteFile(summary, data, 0o644))
	code, _, stderr := runCLI(t, "post", "--dry-run", "--repo", "o/r", "--issue", "7", "--run-id", "1", dir)
	if code != exitOK || !strings.Contains(stderr, "login with $WANDB_API_KEY refused") || strings.Contains(stderr, secret) {
		t.Errorf("post: exit %d, stderr:\n%s", code, stderr)
	}
}
