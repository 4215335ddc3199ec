package cli_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNoSentinels: the commands name no sentinel error of the module's
// packages (an exported Err* of theirs) but the two classes of the exit
// code rule, idgen.ErrInvalid and idgen.ErrUnavailable: a library error
// reaches the user through its class and its text, or a typed error
// (*idgen.FieldError, *migrate.ConfirmError) the command reads as data.
// It parses the package's non-test files with go/parser.
func TestNoSentinels(t *testing.T) {
	allowed := map[string]bool{"idgen.ErrInvalid": true, "idgen.ErrUnavailable": true}
	known := map[string][]string{} // file: names the commands may name, each with its reason
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]string{} // name in the file -> import path
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			n := path.Base(p)
			if p == "github.com/idgenkit/idgen" {
				n = "idgen"
			}
			if is.Name != nil {
				n = is.Name.Name
			}
			imports[n] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || !strings.HasPrefix(sel.Sel.Name, "Err") || !ast.IsExported(sel.Sel.Name) {
				return true
			}
			p, ok := imports[x.Name]
			if !ok || p != "github.com/idgenkit/idgen" && !strings.HasPrefix(p, "github.com/idgenkit/idgen/") {
				return true // a variable's method (cmd.ErrOrStderr), or the standard library's
			}
			ref := x.Name + "." + sel.Sel.Name
			switch {
			case allowed[ref]:
			case slices.Contains(known[name], ref):
				seen[name+": "+ref] = true
			default:
				t.Errorf("%s: %s names %s, a sentinel of %s: let the library return an error the command prints, or a typed one it reads",
					fset.Position(sel.Pos()), name, ref, p)
			}
			return true
		})
	}
	for name, refs := range known {
		for _, ref := range refs {
			if !seen[name+": "+ref] {
				t.Errorf("%s no longer names %s: remove it from the known exceptions", name, ref)
			}
		}
	}
}
