// Command gen writes the artifact trees under testdata/trees that the tests of
// several packages read (docs/formats.md), deterministically, replacing each
// tree it writes. Run it from the repository root after changing it, and
// commit the trees with it:
//
//	go run ./testdata/gen
//
// With -kvcached DIR -cases N it writes instead one large tree in kvcached's
// own format (package internal/benchtree), for measuring merge and render.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ovg-project/ci-report/internal/benchtree"
)

func main() {
	out := flag.String("out", "testdata/trees", "directory that receives one tree per scenario")
	kvcached := flag.String("kvcached", "", "write only a large tree in kvcached's own format (indent=1) to this directory")
	cases := flag.Int("cases", 3000, "server cases of the -kvcached tree, cases of the -small tree")
	small := flag.String("small", "", "write only a tree of many small cases (imported tests: a name, a duration, a failure check in one case of 50) to this directory")
	parts := flag.Int("parts", 8, "parts of the -kvcached or -small tree")
	junit := flag.String("junit", "", "write only a pytest JUnit report (BenchmarkImportJUnit's) to this file")
	testcases := flag.Int("testcases", 100000, "testcases of the -junit report")
	passing := flag.Bool("passing", false, "the -junit report's testcases all pass, with short names (a million: 61 MiB)")
	flag.Parse()
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
	default:
		writeTrees(*out)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s, %.1f MiB\n", wrote, float64(n)/(1<<20))
}

// writeTrees writes every scenario's tree under out.
func writeTrees(out string) {
	for _, sc := range scenarios() {
		root := filepath.Join(out, sc.Name)
		if err := os.RemoveAll(root); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		readme := fmt.Sprintf("# %s\n\nWritten by `go run ./testdata/gen` (scenario %q in testdata/gen/scenarios.go); do not edit by hand.\n\n%s\n", sc.Name, sc.Name, sc.About)
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
	}
}
