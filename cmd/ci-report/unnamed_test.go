package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
)

// TestImportedSuiteWithoutConfig: an imported pytest part rendered outside
// Actions with no config is named after its part and links nowhere (no
// commit or compare link into kvcached's repository); GITHUB_REPOSITORY or
// the config's repository_url brings the links back, to that repository;
// kvcached's own parts keep kvcached's links (docs/render.md §3.2, §9).
func TestImportedSuiteWithoutConfig(t *testing.T) {
	dir := t.TempDir()
	const rev = "88c8f96aa0b1c2d3e4f5061728394a5b6c7d8e9f"
	const prev = "1111111111111111111111111111111111111111"
	part := filepath.Join(dir, "pytest")
	if code, _, stderr := runCLI(t, "import", "junit", junitFixture("pytest-xunit2-parent.xml"), "--part", "pytest", "--out", part, "--revision", rev); code != exitOK {
		t.Fatalf("import junit: exit %d: %s", code, stderr)
	}
	config := filepath.Join(dir, "ci-report.json")
	if err := os.WriteFile(config, []byte(`{"repository_url": "https://github.com/me/cfg"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	render := func(vars map[string]string, tree string, extra ...string) []mdtest.Cell {
		t.Helper()
		comment := filepath.Join(t.TempDir(), "comment.md")
		args := append([]string{"render", tree, "--date", "2026-12-01", "--prev", prev + ":success", "--comment", comment}, extra...)
		if code, _, stderr := runWith(t, vars, "", args...); code != exitOK {
			t.Fatalf("render %q: exit %d: %s", args, code, stderr)
		}
		doc, err := os.ReadFile(comment)
		if err != nil {
			t.Fatal(err)
		}
		if links := mdtest.Links(doc); slices.ContainsFunc(links, func(l string) bool { return strings.Contains(l, "ovg-project/kvcached") }) && tree == part {
			t.Errorf("the imported suite links into kvcached (%v): %q", vars, links)
		}
		return mdtest.Paragraphs(doc)
	}
	for _, tc := range []struct {
		name  string
		vars  map[string]string
		extra []string
		line  string
		links []string
	}{
		{"no repository", nil, nil, "pytest 88c8f96 · previous run at 1111111 (PASS)", []string{}},
		{"GITHUB_REPOSITORY", map[string]string{"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "me/rlt"}, nil,
			"pytest 88c8f96 · changes since the previous run at 1111111 (PASS)",
			[]string{"https://github.com/me/rlt/commit/" + rev, "https://github.com/me/rlt/compare/" + prev + "..." + rev}},
		{"the config's repository", nil, []string{"--config", config},
			"pytest 88c8f96 · changes since the previous run at 1111111 (PASS)",
			[]string{"https://github.com/me/cfg/commit/" + rev, "https://github.com/me/cfg/compare/" + prev + "..." + rev}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paras := render(tc.vars, part, tc.extra...)
			if len(paras) == 0 || paras[0].Text != tc.line || !slices.Equal(paras[0].Links, tc.links) {
				t.Errorf("run line: got %+v\nwant %q with links %q", paras[0], tc.line, tc.links)
			}
		})
	}
	// kvcached's own parts, with nothing named: kvcached's name and links.
	paras := render(nil, treePath("nightly-fail"))
	if len(paras) == 0 || !strings.HasPrefix(paras[0].Text, "kvcached ") || len(paras[0].Links) == 0 || !strings.HasPrefix(paras[0].Links[0], "https://github.com/ovg-project/kvcached/commit/") {
		t.Errorf("kvcached's run line: %+v", paras[0])
	}
}
