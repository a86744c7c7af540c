package main

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/merge"
)

// TestKnownIssuesCannotCoverARunWholesale: a known-issues file of narrow
// entries, none a catch-all (`[a-m]*`, `[n-z]*` and the exact names of the
// failed crash checks), that together cover every failure of a failing run
// is not applied: the comment says so among its problems, the verdict counts
// every failure and --fail-on verdict exits 1. Before, the entries were
// applied without a word (this tree stays FAIL through a case they do not
// reach; merge's TestKnownIssuesWholesale has the run they turned PASS).
func TestKnownIssuesCannotCoverARunWholesale(t *testing.T) {
	dir := t.TempDir()
	merged := filepath.Join(dir, "merged.json")
	if code, _, stderr := runWith(t, nil, "", "merge", "--out", merged, treePath("nightly-fail")); code != exitOK {
		t.Fatalf("merge exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := merge.DecodeMerged(context.Background(), merged, raw)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict == merge.VerdictPass {
		t.Fatal("the tree should fail")
	}
	exact := map[string]bool{}
	for _, c := range rep.Cases {
		for _, ch := range c.Checks {
			for _, p := range merge.ExactOnly {
				if ok, _ := path.Match(p, ch.Name); ok && !ch.OK {
					exact[ch.Name] = true
				}
			}
		}
	}
	var entries []merge.KnownIssue
	for _, cases := range []string{"[a-m]*", "[n-z]*"} {
		checks := []string{"[a-m]*", "[n-z]*"}
		for name := range exact {
			checks = append(checks, name)
		}
		slices.Sort(checks)
		for _, ch := range checks {
			entries = append(entries, merge.KnownIssue{Check: ch, Cases: cases, URL: "https://github.com/o/r/issues/1"})
		}
	}
	data, _ := json.Marshal(entries)
	known := filepath.Join(dir, "known.json")
	if err := os.WriteFile(known, data, 0o644); err != nil {
		t.Fatal(err)
	}
	comment := filepath.Join(dir, "comment.md")
	code, _, stderr := runWith(t, nil, "", "render", merged, "--known-issues", known, "--fail-on", "verdict", "--comment", comment)
	if code != exitVerdict || !strings.Contains(stderr, "verdict: FAIL") || !strings.Contains(stderr, "warning: known issues: its entries") {
		t.Errorf("render exit %d, stderr %q; want 1, the FAIL verdict and a warning saying why", code, stderr)
	}
	doc, _ := os.ReadFile(comment)
	if !strings.Contains(string(doc), "may not cover a run wholesale") || verdictOf(string(doc)) == merge.VerdictPass {
		t.Errorf("the comment neither fails nor says why:\n%s", doc)
	}
}
