// Package golden is the test suite's one golden-file helper: a test compares
// what it produced with a file or tree under testdata/, and `go test ./<pkg>
// -update` rewrites them (golden files change only so). Importing it (from
// _test.go files only) defines the -update flag.
package golden

import (
	"bytes"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from what the tests produce")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the golden file at path, or rewrites it under
// -update. A nil got means the file must not exist (under -update it is
// removed): a document that was not produced.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		write(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if got == nil {
		if err == nil {
			t.Errorf("%s exists, but the test produced nothing for it (go test -update removes it)", path)
		}
		return
	}
	if err != nil {
		t.Fatalf("read golden file: %v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test produced (-golden +got; go test -update rewrites it):\n%s",
			path, cmp.Diff(string(want), string(got)))
	}
}

// CheckTree compares files (slash-separated paths relative to dir → content)
// with the tree under dir, both ways: a file missing from either side is a
// difference. Under -update the tree is rewritten to hold exactly files.
func CheckTree(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for _, rel := range treeFiles(t, dir) {
		switch _, ok := files[rel]; {
		case ok:
		case *update:
			write(t, filepath.Join(dir, filepath.FromSlash(rel)), nil)
		default:
			t.Errorf("%s is in the golden tree, but the test produced no such file (go test -update removes it)", filepath.Join(dir, rel))
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		got := files[rel]
		if got == nil {
			got = []byte{} // an empty file is a file; nil would mean "must not exist"
		}
		Check(t, filepath.Join(dir, filepath.FromSlash(rel)), got)
	}
}

// treeFiles lists the regular files under dir (none if dir is missing).
func treeFiles(t testing.TB, dir string) []string {
	t.Helper()
	var rels []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(rel string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rels = append(rels, rel)
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("list golden tree %s: %v", dir, err)
	}
	return rels
}

// write stores got at path (creating its directory); a nil got removes path.
func write(t testing.TB, path string, got []byte) {
	t.Helper()
	if got == nil {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatalf("remove golden file: %v", err)
		}
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("create golden directory: %v", err)
	}
	if err := os.WriteFile(path, got, 0o644); err != nil {
		t.Fatalf("write golden file: %v", err)
	}
}
