package merge

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMergeReadsNothing holds merge to being a pure function of what
// collect.LoadInput read: none of its files (tests apart) imports a
// package that reaches the disk.
func TestMergeReadsNothing(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	disk := map[string]bool{"os": true, "io/fs": true, "io/ioutil": true, "syscall": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); disk[path] {
				t.Errorf("%s imports %s: reading the disk is collect's (collect.LoadInput)", f, path)
			}
		}
	}
}
