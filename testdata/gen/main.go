// Command gen writes the artifact trees under testdata/trees that the tests of
// several packages read (docs/formats.md), deterministically: the same
// program writes the same bytes on every machine. Run it from the repository
// root after changing it, and commit the trees with it:
//
//	go run ./testdata/gen
//
// It replaces each tree it writes (and only those), so a file removed from a
// scenario disappears from its tree.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	out := flag.String("out", "testdata/trees", "directory that receives one tree per scenario")
	flag.Parse()
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
