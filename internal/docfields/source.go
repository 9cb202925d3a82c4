// Package docfields keeps the reference pages under docs/ whole: every field a front door's
// decoder accepts has its row in that door's table (one row per field, one column per
// backend), and every link between the pages lands on a file and a heading that exist.
//
// What a decoder accepts is read from the decoder's own Go source, not from a list kept
// beside it: the json tags of the struct it decodes into, the case labels of the switch it
// dispatches on, the elements of the list or the keys of the map it checks against. A field
// added to a decoder therefore fails the test until its row is written, and no second list
// can drift from the code.
//
//	source.go  what a decoder accepts, read from its source (go/ast)
//	page.go    a Markdown page's tables by section, the names a row covers, links and anchors
package docfields

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Source says where in a decoder's code a set of accepted names is. File is relative to the
// module root; exactly one of Struct, Var or Func is set.
type Source struct {
	File string
	// Struct: the json names of this struct type's fields.
	Struct string
	// Var: a package-level slice, array or map literal: its string elements, or its keys.
	Var string
	// Func ("name", or "Recv.name" for a method) with Switch: the string case labels of every
	// switch on that expression in the function ("key", "c.Type"). With Calls instead: the
	// first string argument of every call of those functions in it ("h.Get").
	Func   string
	Switch string
	Calls  []string
}

func (s Source) String() string {
	switch {
	case s.Struct != "":
		return s.File + ": struct " + s.Struct
	case s.Var != "":
		return s.File + ": var " + s.Var
	case s.Switch != "":
		return s.File + ": " + s.Func + ", switch " + s.Switch
	}
	return s.File + ": " + s.Func + ", calls of " + strings.Join(s.Calls, ", ")
}

// Names reads the names s points at in the module at root, sorted and without repeats. An
// empty answer is an error: the code it points at has moved or changed shape.
func (s Source) Names(root string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, s.File), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var names []string
	switch {
	case s.Struct != "":
		names = structTags(f, s.Struct)
	case s.Var != "":
		names = literalStrings(f, s.Var)
	case s.Switch != "":
		names = inFunc(f, s.Func, func(n ast.Node) []string { return caseLabels(n, s.Switch) })
	case len(s.Calls) > 0:
		names = inFunc(f, s.Func, func(n ast.Node) []string { return callArgs(n, s.Calls) })
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: found no names (has the decoder moved?)", s)
	}
	return names, nil
}

// structTags are the json names of a struct type's fields, as encoding/json reads them.
func structTags(f *ast.File, name string) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != name {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, fd := range st.Fields.List {
			if fd.Tag == nil {
				continue
			}
			tag, err := strconv.Unquote(fd.Tag.Value)
			if err != nil {
				continue
			}
			if n, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ","); n != "" && n != "-" {
				out = append(out, n)
			}
		}
		return false
	})
	return out
}

// literalStrings are the string elements (or, for a map, the string keys) of the composite
// literal a package-level var is set to.
func literalStrings(f *ast.File, name string) []string {
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, sp := range gd.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name != name || i >= len(vs.Values) {
					continue
				}
				if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
					for _, el := range cl.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							el = kv.Key
						}
						if s, ok := stringLit(el); ok {
							out = append(out, s)
						}
					}
				}
			}
		}
	}
	return out
}

// inFunc applies collect to the body of the function named name ("Recv.name" for a method
// of Recv or *Recv).
func inFunc(f *ast.File, name string, collect func(ast.Node) []string) []string {
	recv, fn, isMethod := strings.Cut(name, ".")
	if !isMethod {
		recv, fn = "", name
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn || fd.Body == nil || receiver(fd) != recv {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			out = append(out, collect(n)...)
			return true
		})
	}
	return out
}

func receiver(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// caseLabels are the non-empty string labels of n when it is a switch on tag.
func caseLabels(n ast.Node, tag string) []string {
	sw, ok := n.(*ast.SwitchStmt)
	if !ok || sw.Tag == nil || types.ExprString(sw.Tag) != tag {
		return nil
	}
	var out []string
	for _, st := range sw.Body.List {
		for _, e := range st.(*ast.CaseClause).List {
			if s, ok := stringLit(e); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// callArgs is the first argument of n when n calls one of funcs and that argument is a
// string literal.
func callArgs(n ast.Node, funcs []string) []string {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 || !slices.Contains(funcs, types.ExprString(call.Fun)) {
		return nil
	}
	if s, ok := stringLit(call.Args[0]); ok {
		return []string{s}
	}
	return nil
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}
