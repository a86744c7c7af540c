//go:build unix

package collect

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ovg-project/ci-report/internal/safefile"
)

// TestOpenOnlyRegularFiles: a FIFO (which blocked open(2) forever), a
// directory and a device are refused, naming the file and what it is; a
// regular file, and a link to one inside the part, are read.
func TestOpenOnlyRegularFiles(t *testing.T) {
	root := writeTree(t, map[string]string{"p/summary-final.json": sumTwo, "p/setup.json/": ""})
	p := filepath.Join(root, "p")
	if err := syscall.Mkfifo(filepath.Join(p, "part.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("summary-final.json", filepath.Join(p, "summary.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(root, "null.json")); err != nil {
		t.Fatal(err)
	}
	parts, err := LoadParts([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"part.json: not a regular file (a named pipe), not read (the part's plan and completion are unknown)",
		"setup.json: not a regular file (a directory), not read (the part contributes no setup)",
	}
	if got := Problems(parts[0].Problems); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems = %q, want %q", got, want)
	}
	if len(parts[0].Cases) != 2 || !parts[0].HasSummary {
		t.Errorf("summary.json, a link inside the part, not read: %+v", parts[0])
	}
	for _, path := range []string{filepath.Join(root, "null.json"), filepath.Join(p, "part.json")} {
		var v PartMeta
		if err := ReadJSONFile(path, safefile.Part, &v); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadJSONFile(%s) = %v, want not a regular file", path, err)
		}
		if _, err := ReadSummary(path); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadSummary(%s) = %v, want not a regular file", path, err)
		}
		if _, err := ReadCasesJSONL(path); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadCasesJSONL(%s) = %v, want not a regular file", path, err)
		}
	}
}

// TestLinksOutOfThePartRefused: a part file that is a symbolic link leaving
// the part directory (to another part's file, or anywhere) is not read.
func TestLinksOutOfThePartRefused(t *testing.T) {
	root := writeTree(t, map[string]string{"sglang/summary.json": sumTwo, "sglang/setup.json": setupMin, "vllm/cases.jsonl": jsonlTwo, "perf/x.json": "{}"})
	vllm := filepath.Join(root, "vllm")
	for name, target := range map[string]string{
		"summary.json": filepath.Join("..", "sglang", "summary.json"),
		"setup.json":   filepath.Join(root, "sglang", "setup.json"),
	} {
		if err := os.Symlink(target, filepath.Join(vllm, name)); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := LoadParts([]string{vllm})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"setup.json: a symbolic link that leaves its part directory, not followed (the part contributes no setup)",
		"summary.json: a symbolic link that leaves its part directory, not followed",
	}
	p := parts[0]
	if strings.Join(Problems(p.Problems), "\n") != strings.Join(want, "\n") || p.Setup != nil || p.HasSummary || p.Status != StatusPartial {
		t.Errorf("part %s (%s), setup %v, summary %v, problems %q; want problems %q", p.Status, p.Reason, p.Setup != nil, p.HasSummary, p.Problems, want)
	}
	// perf/ likewise.
	perf := filepath.Join(root, "perfroot", "perf")
	if err := os.MkdirAll(perf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "perf", "x.json"), filepath.Join(perf, "setup.json")); err != nil {
		t.Fatal(err)
	}
	setup, _, problems := LoadPerf(filepath.Join(root, "perfroot"))
	if setup != nil || len(problems) != 1 || !strings.Contains(problems[0].String(), "setup.json: a symbolic link that leaves its part directory") {
		t.Errorf("perf setup %v, problems %q", setup, problems)
	}
}

// zeros is an endless input of NUL bytes, as a sparse file or /dev/zero is.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestScanCasesJSONLEndlessLine: after a line that does not parse, at most
// maxSkippedLine bytes are skipped looking for its end; then reading stops,
// saying so. Before the bound an endless line was read forever.
func TestScanCasesJSONLEndlessLine(t *testing.T) {
	z := &zeros{}
	res, err := ScanCasesJSONL(io.MultiReader(strings.NewReader(jsonlTwo), z))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 2 || len(res.Dropped) != 1 || !strings.HasPrefix(res.Dropped[0], "line 3: byte 0: invalid character") {
		t.Errorf("cases %d, bad %q", len(res.Cases), res.Dropped)
	}
	if want := "line 3: no end of line within 256 MiB after the error above; the rest of cases.jsonl is not read"; res.Stopped != want {
		t.Errorf("stopped = %q, want %q", res.Stopped, want)
	}
	if z.n > maxSkippedLine+2*scanBufSize {
		t.Errorf("read %d bytes of the endless line", z.n)
	}
}
