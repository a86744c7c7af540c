package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/merge"
)

// The config file is read once, and the problems of its values name the
// file and the key (render.Options.Problems, collect.Problem).
func TestRenderConfigProblemNamesFileAndKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "ci-report.json")
	if err := os.WriteFile(cfg, []byte(`{"repository_url": "javascript:alert(1)"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "render", "--config", cfg, "--date", "2026-11-28", treePath("nightly-fail"))
	want := "ci-report render: " + cfg + `: repository_url: "javascript:alert(1)": want a plain http(s) URL` + "\n"
	if code != exitUsage || stderr != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// A config file's repository_url wins over the Actions repository, which
// wins over the default; the file is decoded once for both.
func TestRenderRepositoryURLLayers(t *testing.T) {
	actions := map[string]string{"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "fork/kvcached"}
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		want       string
	}{
		{"default", "", nil, "https://github.com/ovg-project/kvcached"},
		{"actions over the default", "", actions, "https://github.com/fork/kvcached"},
		{"a file without the key", `{"product": "kvcached"}`, actions, "https://github.com/fork/kvcached"},
		{"the file over actions", `{"repository_url": "https://git.example/me/kv"}`, actions, "https://git.example/me/kv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in renderInputs
			reads := 0
			if tc.file != "" {
				in.config = "cfg.json"
				in.ReadFile = func(string, safefile.Kind) ([]byte, error) { reads++; return []byte(tc.file), nil }
			}
			in.LoadTree = func([]string, merge.Options) (*merge.Report, error) { return &merge.Report{Format: 1}, nil }
			in.flags.Profile = "nightly"
			e, _, _ := testEnv(tc.env)
			_, opts, err := in.load(context.Background(), e, []string{"x"})
			if err != nil {
				t.Fatal(err)
			}
			if opts.Config.RepositoryURL != tc.want || (tc.file != "" && reads != 1) {
				t.Errorf("repository %q after %d reads; want %q after one", opts.Config.RepositoryURL, reads, tc.want)
			}
			if tc.file != "" && opts.Config.Source != "cfg.json" {
				t.Errorf("config source %q, want cfg.json", opts.Config.Source)
			}
		})
	}
}

// What the flags alone set is checked by render's rules while parsing,
// before anything is read: a bad --run-id is a usage error with the hint.
func TestRenderFlagProblemsBeforeReading(t *testing.T) {
	code, _, stderr := runCLI(t, "render", "--run-id", "12a", filepath.Join(t.TempDir(), "absent"))
	if code != exitUsage || !strings.HasPrefix(stderr, `ci-report render: --run-id: "12a": want a number`+"\n") ||
		!strings.HasSuffix(stderr, "run 'ci-report help render' for usage\n") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
