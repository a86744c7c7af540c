package render_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// TestRenderRedactsTheData: a report holding secrets renders, byte for
// byte, as the same report with the secrets already replaced: render
// redacts the data before it cuts, escapes or plans anything, and changes
// nothing else. Without Options.Redact the token shapes are still redacted.
func TestRenderRedactsTheData(t *testing.T) {
	atRoot(t)
	const envValue = `s3cr3t*_<&>"q"\|#1` // Markdown, HTML and JSON escape every one of these
	shapeTok := "ghs_" + "PlantedServerToServerToken0123456789"
	plant := func(rep *merge.Report, secret, token string) {
		s := secret + " " + token
		rep.Setup.GPUs[0].Name += " " + s
		e, _ := rep.Setup.Engines.Get("vllm")
		e.Image += s
		e.Env.Set("HF_TOKEN", s)
		rep.Setup.Engines.Set("vllm", e)
		rep.Setup.Cases[0].ExtraArgs = append(rep.Setup.Cases[0].ExtraArgs, "--api-key", s)
		rep.Problems = append(rep.Problems, collect.Problem{Part: "vllm", File: "cases.jsonl", What: "line 3: " + s})
		rep.Cases = append(rep.Cases, merge.Case{Name: "vllm-leak-" + token, Part: "vLLM " + secret,
			Checks: []collect.Check{{Name: "serve_log", Detail: "serve.log: Authorization: token " + s}}})
	}
	for _, gc := range []goldenCase{
		{name: "nightly", tree: "nightly-fail"},
		{name: "pull request", tree: "pr", opts: func(o *render.Options) { o.PR = 123 }},
	} {
		t.Run(gc.name, func(t *testing.T) {
			leaky, want := gc.load(t), gc.load(t)
			plant(leaky, envValue, shapeTok)
			plant(want, "$GITHUB_TOKEN", "ghs_[REDACTED]")
			opts := gc.options()
			opts.Subject = "fix " + envValue
			opts.Redact = collect.NewRedactor(func(k string) string { return map[string]string{"GITHUB_TOKEN": envValue}[k] }, collect.SecretEnvNames...)
			got, err := render.Render(leaky, opts)
			if err != nil {
				t.Fatal(err)
			}
			wantOpts := gc.options()
			wantOpts.Subject = "fix $GITHUB_TOKEN"
			wantDocs, err := render.Render(want, wantOpts)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wantDocs, got); d != "" {
				t.Errorf("redacted render differs from the render of the redacted report (-want +got):\n%s", d)
			}
			var gotText, wantText bytes.Buffer
			if err := render.Text(&gotText, leaky, opts); err != nil {
				t.Fatal(err)
			}
			render.Text(&wantText, want, wantOpts)
			if d := cmp.Diff(wantText.String(), gotText.String()); d != "" {
				t.Errorf("terminal tables (-want +got):\n%s", d)
			}
			// The caller's report is not changed.
			if leaky.Cases[len(leaky.Cases)-1].Name != "vllm-leak-"+shapeTok {
				t.Error("Render changed the report it was given")
			}
			// Without a secret set: the shapes alone.
			opts.Redact = nil
			shapes, err := render.Render(leaky, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, doc := range []string{shapes.Comment, shapes.Section} {
				if bytes.Contains([]byte(doc), []byte("PlantedServerToServerToken")) {
					t.Errorf("the token shape survives without a secret set:\n%s", doc)
				}
			}
		})
	}
}

// TestRenderRedactsTheSetupEnvSecrets: a secret-named variable of an
// engine's or a server's env in the report's setup is a secret of every
// document, without any secret set given: the issue section, the comment,
// the terminal tables and the check-run annotations hold its name, never
// its value, wherever the value stands.
func TestRenderRedactsTheSetupEnvSecrets(t *testing.T) {
	atRoot(t)
	const engineSecret, serverSecret = "wandb-0123456789abcdef", "S3rv1ceCredentialValue"
	gc := goldenCase{name: "nightly", tree: "nightly-fail"}
	rep := gc.load(t)
	e, _ := rep.Setup.Engines.Get("vllm")
	e.Env.Set("WANDB_API_KEY", engineSecret)
	rep.Setup.Engines.Set("vllm", e)
	rep.Setup.Cases[0].Env.Set("SERVICE_CREDENTIALS", serverSecret)
	for i := range rep.Cases {
		if rep.Cases[i].Failed() {
			rep.Cases[i].Checks = append(rep.Cases[i].Checks, collect.Check{Name: "serve_log", Detail: "wandb: " + engineSecret + " svc " + serverSecret})
		}
	}
	opts := gc.options()
	docs, err := render.Render(rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := render.Text(&text, rep, opts); err != nil {
		t.Fatal(err)
	}
	anns, err := render.Annotations(rep, opts)
	if err != nil {
		t.Fatal(err)
	}
	all := docs.Comment + docs.Section + text.String() + fmt.Sprint(anns)
	for _, s := range []string{engineSecret, serverSecret} {
		if strings.Contains(all, s) {
			t.Errorf("a document holds %q", s)
		}
	}
	if !strings.Contains(all, `WANDB\_API\_KEY`) && !strings.Contains(all, "$WANDB_API_KEY") {
		t.Errorf("no document names the redacted variable")
	}
}
