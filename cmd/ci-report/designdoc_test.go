package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/internal/mdtest"
)

// TestDesignTables checks docs/design.md §2's package table and §4's
// dependency table against the code (docs/design.md §2): every package of
// the module has a row whose imports cell names, in code spans, exactly
// what its non-test files import of this module and outside the standard
// library (under -tags nvml, the build with every dependency), and §4 names
// exactly go.mod's direct requirements.
func TestDesignTables(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	tables := mdtest.Tables(doc)
	if len(tables) < 2 {
		t.Fatalf("docs/design.md has %d tables, want the package table (§2) and the dependency table (§4)", len(tables))
	}
	module, imports := goListImports(t, root)
	documented := map[string][]string{}
	for _, row := range tables[0].Rows {
		pkg := row[0].Code
		if len(pkg) != 1 {
			t.Errorf("docs/design.md §2: a row's package cell must be one code span, got %q", row[0].Text)
			continue
		}
		documented[pkg[0]] = sorted(row[2].Code)
	}
	for pkg, got := range imports {
		want, ok := documented[pkg]
		if !ok {
			t.Errorf("docs/design.md §2: package %s has no row; its imports are %q", pkg, got)
			continue
		}
		if !slices.Equal(want, got) {
			t.Errorf("docs/design.md §2: %s imports %q, the table says %q", pkg, got, want)
		}
	}
	for pkg := range documented {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("docs/design.md §2: the table has a row for %s, which `go list` does not know in %s", pkg, module)
		}
	}
	var deps []string
	for _, row := range tables[1].Rows {
		deps = append(deps, row[0].Code...)
	}
	if want := directRequires(t, root); !slices.Equal(sorted(deps), want) {
		t.Errorf("docs/design.md §4 names the modules %q; go.mod requires directly %q", sorted(deps), want)
	}
}

// goListImports lists, for every package of the module, what its non-test
// files import of the module (as a path relative to it) and outside the
// standard library (as the module's path).
func goListImports(t *testing.T, root string) (string, map[string][]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", "nvml", "-json=ImportPath,Standard,Imports,Module", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	type pkg struct {
		ImportPath string
		Standard   bool
		Imports    []string
		Module     *struct{ Path, Dir string }
	}
	all := map[string]pkg{}
	var module string
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		all[p.ImportPath] = p
		if p.Module != nil && p.ImportPath == p.Module.Path+"/cmd/ci-report" {
			module = p.Module.Path
		}
	}
	rel := func(path string) string { return strings.TrimPrefix(path, module+"/") }
	imports := map[string][]string{}
	for _, p := range all {
		if p.Module == nil || p.Module.Path != module {
			continue
		}
		set := []string{}
		for _, i := range p.Imports {
			d := all[i]
			switch {
			case d.Standard || d.Module == nil:
				continue
			case d.Module.Path == module:
				set = append(set, rel(i))
			default:
				set = append(set, d.Module.Path)
			}
		}
		imports[rel(p.ImportPath)] = slices.Compact(sorted(set))
	}
	return module, imports
}

// directRequires are go.mod's requirements not marked indirect.
func directRequires(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-json=Path,Main,Indirect", "all")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m: %v: %s", err, stderr.String())
	}
	var direct []string
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var m struct {
			Path           string
			Main, Indirect bool
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("go list -m output: %v", err)
		}
		if !m.Main && !m.Indirect {
			direct = append(direct, m.Path)
		}
	}
	return sorted(direct)
}
