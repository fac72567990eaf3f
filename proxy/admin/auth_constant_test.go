package admin_test

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"testing"
)

// TestTokenComparedInConstantTime holds the token check to its code, as a
// timing test on a shared machine could not: RequireToken compares
// digests of equal length with crypto/subtle, and neither it nor what it
// calls compares the token any other way (==, !=, bytes.Equal,
// strings.Compare, strings.EqualFold, strings.HasPrefix).
func TestTokenComparedInConstantTime(t *testing.T) {
	fset := gotoken.NewFileSet()
	f, err := parser.ParseFile(fset, "auth.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			funcs[fd.Name.Name] = fd
		}
	}
	check, ok := funcs["RequireToken"]
	if !ok {
		t.Fatal("auth.go has no RequireToken")
	}
	// The names the token, the guess and their digests go by.
	secret := map[string]bool{"token": true, "got": true, "want": true, "sum": true}
	var constant, digest bool
	for _, fd := range []*ast.FuncDecl{check, funcs["bearer"]} {
		ast.Inspect(fd, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, _ := sel.X.(*ast.Ident)
				if pkg == nil {
					return true
				}
				switch pkg.Name + "." + sel.Sel.Name {
				case "subtle.ConstantTimeCompare":
					constant = true
				case "sha256.Sum256":
					digest = true
				case "bytes.Equal", "strings.Compare", "strings.EqualFold", "strings.HasPrefix", "bytes.HasPrefix", "reflect.DeepEqual":
					for _, a := range n.Args {
						if id, ok := a.(*ast.Ident); ok && secret[id.Name] {
							t.Errorf("%s: %s.%s compares %s in variable time", fset.Position(n.Pos()), pkg.Name, sel.Sel.Name, id.Name)
						}
					}
				}
			case *ast.BinaryExpr:
				if n.Op != gotoken.EQL && n.Op != gotoken.NEQ {
					return true
				}
				for _, x := range []ast.Expr{n.X, n.Y} {
					if id, ok := x.(*ast.Ident); ok && secret[id.Name] && !isEmptyString(n.X) && !isEmptyString(n.Y) {
						t.Errorf("%s: %s compared with %s", fset.Position(n.Pos()), id.Name, n.Op)
					}
				}
			}
			return true
		})
	}
	if !constant || !digest {
		t.Errorf("RequireToken: subtle.ConstantTimeCompare called %v, sha256 digests compared %v; want both", constant, digest)
	}
}

// isEmptyString reports whether e is "": checking that a token was given
// says nothing of it.
func isEmptyString(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == gotoken.STRING && lit.Value == `""`
}
