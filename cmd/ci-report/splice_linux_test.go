package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpliceRefusesPseudoFiles: splice writes out what it reads, so a file
// of procfs or sysfs (regular by its mode) is refused before anything is
// read: `splice --body /proc/self/environ` once wrote the whole
// environment, token included. A link to one is judged by its target.
func TestSpliceRefusesPseudoFiles(t *testing.T) {
	dir := t.TempDir()
	section := filepath.Join(dir, "section.md")
	mustDo(t, os.WriteFile(section, []byte("## Nightly\n"), 0o644))
	link := filepath.Join(dir, "body.md")
	mustDo(t, os.Symlink("/proc/self/environ", link))
	out := filepath.Join(dir, "out.md")
	for _, c := range []struct {
		args []string
		fs   string
	}{
		{[]string{"--body", "/proc/self/environ", "--section", section}, "procfs"},
		{[]string{"--body", link, "--section", section}, "procfs"},
		{[]string{"--body", section, "--section", "/proc/self/cmdline"}, "procfs"},
		{[]string{"--body", "/sys/kernel/uevent_seqnum", "--section", section}, "sysfs"},
	} {
		if _, err := os.Stat(c.args[1]); err != nil && c.fs == "sysfs" {
			continue // no sysfs here
		}
		args := append(append([]string{"splice", "--name", "nightly"}, c.args...), "--out", out)
		code, stdout, stderr := runWith(t, map[string]string{"GITHUB_TOKEN": "ghs_secretvalue"}, "", args...)
		if code != exitUsage || !strings.Contains(stderr, c.fs) || stdout != "" {
			t.Errorf("ci-report %s: exit %d, stdout %q, stderr %q; want 2 naming %s", strings.Join(args, " "), code, stdout, stderr, c.fs)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("ci-report %s wrote %s", strings.Join(args, " "), out)
		}
	}
	// A regular file on an ordinary filesystem is spliced.
	body := filepath.Join(dir, "plain.md")
	mustDo(t, os.WriteFile(body, []byte("hand text\n"), 0o644))
	if code, _, stderr := runWith(t, nil, "", "splice", "--name", "nightly", "--body", body, "--section", section, "--out", out); code != exitOK {
		t.Errorf("splice of a regular file: exit %d, %s", code, stderr)
	}
}
