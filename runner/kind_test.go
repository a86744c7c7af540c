package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheKindTableNamesKinds holds the runner to its kind table: no
// code outside kind.go compares an entry's kind with a name (==, !=, a
// switch, a map keyed by kind), so that validation, selection, setup.json
// and the run loop take what they need from kindTable and a new kind is one
// row. A kind constant may only set a Kind field (`Entry{Kind: KindSetup}`,
// a setup.json entry's kind).
func TestOnlyTheKindTableNamesKinds(t *testing.T) {
	kindConst := map[string]bool{}
	for _, k := range kindTable {
		kindConst["Kind"+strings.ToUpper(k.name[:1])+k.name[1:]] = true
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if file == "kind.go" || strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		allowed := map[ast.Node]bool{}
		isKind := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			return ok && sel.Sel.Name == "Kind"
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if key, ok := n.Key.(*ast.Ident); ok && key.Name == "Kind" {
					allowed[n.Value] = true
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isKind(n.X) || isKind(n.Y)) {
					t.Errorf("%s: compares a kind by name; ask the entry's kindSpec (kind.go)", fset.Position(n.Pos()))
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isKind(n.Tag) {
					t.Errorf("%s: switches on a kind's name; ask the entry's kindSpec (kind.go)", fset.Position(n.Pos()))
				}
			case *ast.Ident:
				if kindConst[n.Name] && !allowed[n] {
					t.Errorf("%s: uses %s outside kind.go other than to set a Kind field; ask the entry's kindSpec", fset.Position(n.Pos()), n.Name)
				}
			}
			return true
		})
	}
}
