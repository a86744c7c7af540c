package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// timerFuncs are the time functions that wait for real.
var timerFuncs = map[string]bool{"Sleep": true, "After": true, "NewTimer": true, "Tick": true, "NewTicker": true, "AfterFunc": true}

// realWaits lists the calls of timerFuncs in the non-test Go files of dirs,
// as "file:line time.F in function".
func realWaits(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				ast.Inspect(fn, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if id, isID := ast.Unparen(sel.X).(*ast.Ident); isID && id.Name == "time" && timerFuncs[sel.Sel.Name] {
						out = append(out, filepath.ToSlash(path)+" time."+sel.Sel.Name+" in "+fn.Name.Name)
					}
					return true
				})
			}
		}
	}
	return out
}

// Every wait of post (rate limits, retries, the settle delay before the
// read-back) goes through Publisher.sleep, which calls the injected Sleep
// (env.Sleep) and only without one a real timer: so the CLI tests, which
// inject one, never wait for real, and they need no clock to tell. A new
// real timer in the CLI or in publish fails here, whatever the machine's
// speed.
func TestWaitsGoThroughSleep(t *testing.T) {
	got := realWaits(t, ".", "../../publish")
	want := []string{"../../publish/retry.go time.NewTimer in sleep"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("real waits in the CLI and publish:\n%s\nwant only:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
