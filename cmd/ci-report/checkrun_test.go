package main

import (
	"strings"
	"testing"
)

// Issue 23's acceptance of the check run target: `post --check-run`
// against the fake GitHub creates one check run on the workflow's commit,
// with the verdict, the comment as its summary and an annotation per failed
// case; a re-post of the same run and attempt edits that check run (found
// by its external id) and sends no annotation twice.
func TestAcceptanceCheckRun(t *testing.T) {
	f, srv := accSetup(t)
	environ := accEnv(srv)
	args := append([]string{"post", "--issue", "7", "--date", "2026-11-28", "--apply-delay", "0", "--check-run", "GPU CI (nightly)"}, accParts()...)
	for i, verb := range []string{"created", "updated"} {
		r := accCLI(t, environ, args...)
		if r.code != exitOK {
			t.Fatalf("post %d: exit %d\n%s", i+1, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, `check run: `+verb+` "GPU CI (nightly)" (7000) on `+environ["GITHUB_SHA"]+", failure") {
			t.Errorf("post %d: stderr does not say the check run was %s:\n%s", i+1, verb, r.stderr)
		}
	}
	if len(f.CheckRuns) != 1 {
		t.Fatalf("%d check runs after two posts, want 1", len(f.CheckRuns))
	}
	c := f.CheckRuns[0]
	comment := f.commentsOn(7)
	if c.Name != "GPU CI (nightly)" || c.HeadSHA != environ["GITHUB_SHA"] || c.Conclusion != "failure" || c.Status != "completed" ||
		c.ExternalID != "ci-report:check-run run=4242 attempt=1 profile=nightly" || len(comment) != 2 || c.Summary != comment[1].Body {
		t.Errorf("check run %+v\nwant the comment as its summary", c)
	}
	if !strings.HasPrefix(c.Title, "FAIL (") || len(c.Annotations) == 0 {
		t.Fatalf("title %q, %d annotations", c.Title, len(c.Annotations))
	}
	seen := map[string]bool{}
	for _, a := range c.Annotations {
		if seen[a.Title] || a.Level == "" || a.Path == "" || a.StartLine < 1 {
			t.Errorf("annotation %+v repeated or incomplete", a)
		}
		seen[a.Title] = true
	}
	t.Logf("one check run, %d annotations, e.g. %s:%d %q", len(c.Annotations), c.Annotations[0].Path, c.Annotations[0].StartLine, c.Annotations[0].Title)
}

func TestCheckRunFlagErrors(t *testing.T) {
	// The flag's own rule, through the parse seam; the others need the
	// environment, which only a run reads.
	for _, name := range []string{" ", strings.Repeat("n", 101)} {
		if msg := parseOnly(t, "post", append([]string{"--issue", "7", "--check-run", name}, accParts()...)...); msg != "--check-run: want a name of 1 to 100 characters" {
			t.Errorf("--check-run %q: usage error %q", name, msg)
		}
	}
	o := &postOptions{}
	if err := parseCommand("post", o, append([]string{"--issue", "7", "--check-run", "GPU CI"}, accParts()...)); err != nil || o.checkRun != "GPU CI" {
		t.Errorf("--check-run GPU CI: %q, %v", o.checkRun, err)
	}
	_, srv := accSetup(t)
	environ := accEnv(srv)
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env: map[string]string{"GITHUB_SHA": ""}, args: []string{"--check-run", "GPU CI"}, want: "the head commit is unknown: set GITHUB_SHA"},
		{env: map[string]string{"GITHUB_REPOSITORY": "someone/else"}, args: []string{"--check-run", "GPU CI", "--repo", accRepo},
			want: "the check run goes on the workflow's commit in someone/else, but --repo names " + accRepo},
	} {
		e := map[string]string{}
		for k, v := range environ {
			e[k] = v
		}
		for k, v := range tc.env {
			e[k] = v
		}
		r := accCLI(t, e, append(append([]string{"post", "--issue", "7"}, tc.args...), accParts()...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s", tc.args, r.code, exitUsage, tc.want, r.stderr)
		}
	}
}
