// Package treegen writes the artifact trees under testdata/trees that the
// tests of several packages read (docs/formats.md), deterministically: it
// writes the formats on its own, independently of collect, so the readers
// are tested against an outside writer. TestTrees holds the committed trees
// to what it writes; like every golden file they change only through
//
//	go test ./internal/treegen -update
//
// and the diff is read before committing. TestWrite writes instead one large
// tree for measuring merge and render (internal/benchtree):
//
//	go test ./internal/treegen -run '^TestWrite$' -kvcached /abs/DIR -cases N
//
// (an absolute path: go test runs in internal/treegen).
package treegen

import (
	"cmp"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ovg-project/ci-report/internal/benchtree"
	"github.com/ovg-project/ci-report/internal/golden"
)

var (
	kvcached  = flag.String("kvcached", "", "TestWrite: write a large tree in kvcached's own format (indent=1) to this directory")
	cases     = flag.Int("cases", 3000, "TestWrite: server cases of the -kvcached tree, cases of the -small tree")
	small     = flag.String("small", "", "TestWrite: write a tree of many small cases (imported tests: a name, a duration, a failure check in one case of 50) to this directory")
	parts     = flag.Int("parts", 8, "TestWrite: parts of the -kvcached or -small tree")
	junit     = flag.String("junit", "", "TestWrite: write a pytest JUnit report (BenchmarkImportJUnit's) to this file")
	testcases = flag.Int("testcases", 100000, "TestWrite: testcases of the -junit report")
	passing   = flag.Bool("passing", false, "TestWrite: the -junit report's testcases all pass, with short names (a million: 61 MiB)")
)

// TestTrees writes every scenario's tree into a temporary directory and
// holds testdata/trees/<scenario> to it, file by file (-update rewrites it).
func TestTrees(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			root := t.TempDir()
			readme := fmt.Sprintf("# %s\n\nWritten by `go test ./internal/treegen -update` (scenario %q in internal/treegen/scenarios_test.go); do not edit by hand.\n\n%s\n", sc.Name, sc.Name, sc.About)
			writeFile(filepath.Join(root, "README.md"), []byte(readme))
			for _, p := range sc.Parts {
				p.write(root)
			}
			for _, n := range slices.Sorted(maps.Keys(sc.Extra)) {
				writeFile(filepath.Join(root, n), []byte(sc.Extra[n]))
			}
			if sc.Writer != nil {
				sc.Writer(root)
			}
			files := map[string][]byte{}
			err := fs.WalkDir(os.DirFS(root), ".", func(rel string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				files[rel], err = os.ReadFile(filepath.Join(root, rel))
				return err
			})
			if err != nil {
				t.Fatalf("read the tree written for %s: %v", sc.Name, err)
			}
			golden.CheckTree(t, filepath.Join("..", "..", "testdata", "trees", sc.Name), files)
		})
	}
}

// TestWrite writes the large tree or JUnit report its flags ask for, and is
// skipped without one.
func TestWrite(t *testing.T) {
	switch dest := cmp.Or(*junit, *small, *kvcached); {
	case dest == "":
		t.Skip("no -kvcached, -small or -junit")
	case !filepath.IsAbs(dest):
		t.Fatalf("%s: give an absolute path (go test runs in internal/treegen, not where it was typed)", dest)
	}
	tree := benchtree.Tree{Parts: *parts, Cases: *cases}
	var wrote string
	var n int64
	var err error
	switch {
	case *junit != "":
		write := benchtree.WriteJUnit
		if *passing {
			write = benchtree.WriteJUnitPassing
		}
		n, err = write(*junit, *testcases)
		wrote = fmt.Sprintf("%s: %d testcases", *junit, *testcases)
	case *small != "":
		n, err = benchtree.WriteSmall(*small, tree)
		wrote = fmt.Sprintf("%s: %d small cases in %d parts", *small, *cases, *parts)
	case *kvcached != "":
		n, err = benchtree.WriteKvcached(*kvcached, tree)
		wrote = fmt.Sprintf("%s: %d cases in %d parts", *kvcached, *cases, *parts)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s, %.1f MiB", wrote, float64(n)/(1<<20))
}
