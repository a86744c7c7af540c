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
	"os"
	"path/filepath"
	"sort"

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
	if *junit != "" {
		write := benchtree.WriteJUnit
		if *passing {
			write = benchtree.WriteJUnitPassing
		}
		n, err := write(*junit, *testcases)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s: %d testcases, %.1f MiB\n", *junit, *testcases, float64(n)/(1<<20))
		return
	}
	if *small != "" {
		n, err := benchtree.WriteSmall(*small, benchtree.Tree{Parts: *parts, Cases: *cases})
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s: %d small cases in %d parts, %.1f MiB\n", *small, *cases, *parts, float64(n)/(1<<20))
		return
	}
	if *kvcached != "" {
		n, err := benchtree.WriteKvcached(*kvcached, benchtree.Tree{Parts: *parts, Cases: *cases})
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Printf("wrote %s: %d cases in %d parts, %.1f MiB\n", *kvcached, *cases, *parts, float64(n)/(1<<20))
		return
	}
	for _, sc := range scenarios() {
		root := filepath.Join(*out, sc.Name)
		if err := os.RemoveAll(root); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		readme := fmt.Sprintf("# %s\n\nWritten by `go run ./testdata/gen` (scenario %q in testdata/gen/scenarios.go); do not edit by hand.\n\n%s\n", sc.Name, sc.Name, sc.About)
		writeFile(filepath.Join(root, "README.md"), []byte(readme))
		for _, p := range sc.Parts {
			p.write(root)
		}
		names := make([]string, 0, len(sc.Extra))
		for n := range sc.Extra {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			writeFile(filepath.Join(root, n), []byte(sc.Extra[n]))
		}
		if sc.Writer != nil {
			sc.Writer(root)
		}
	}
}
