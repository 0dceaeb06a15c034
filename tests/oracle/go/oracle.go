// The Go oracle: Go's own parser (go/ast) names the chunks a Go file must give.
// Reads file paths, one a line, on stdin; writes one JSON object a line:
// {"file": path, "units": [...]} or {"file": path, "error": "..."}.
// A unit: kind, name, chain (the receiver's type), top (its doc comment's first line, else
// its first line), sig (the name's line), end (its last line), body (the first line of its
// body, 0 for a type) and doc (the doc comment's text).
// Units: every func with a body (a method's chain is its receiver's type), and every type
// spec (a lone `type X ...` spans its `type` keyword; one of a `type ( ... )` group, itself).
package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

type unit struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Chain string `json:"chain"`
	Top   int    `json:"top"`
	Sig   int    `json:"sig"`
	End   int    `json:"end"`
	Body  int    `json:"body"`
	Doc   string `json:"doc"`
}

type result struct {
	File  string `json:"file"`
	Units []unit `json:"units"`
	Error string `json:"error,omitempty"`
}

func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

func docText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		path := in.Text()
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		res := result{File: path, Units: []unit{}}
		if err != nil {
			res.Error = strings.SplitN(err.Error(), "\n", 2)[0]
			out.Encode(res)
			continue
		}
		line := func(p token.Pos) int { return fset.Position(p).Line }
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				u := unit{Kind: "function", Name: d.Name.Name, Top: line(d.Pos()),
					Sig: line(d.Name.Pos()), End: line(d.End() - 1), Body: line(d.Body.Lbrace),
					Doc: docText(d.Doc)}
				if d.Doc != nil {
					u.Top = line(d.Doc.Pos())
				}
				if d.Recv != nil && len(d.Recv.List) > 0 {
					u.Kind, u.Chain = "method", receiverType(d.Recv.List[0].Type)
				}
				res.Units = append(res.Units, u)
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					continue
				}
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					u := unit{Kind: "type", Name: ts.Name.Name, Top: line(ts.Pos()),
						Sig: line(ts.Name.Pos()), End: line(ts.End() - 1), Doc: docText(ts.Doc)}
					if ts.Doc != nil {
						u.Top = line(ts.Doc.Pos())
					}
					if !d.Lparen.IsValid() {
						u.Top, u.End, u.Doc = line(d.Pos()), line(d.End()-1), docText(d.Doc)
						if d.Doc != nil {
							u.Top = line(d.Doc.Pos())
						}
					}
					if !ts.Assign.IsValid() {
						switch ts.Type.(type) {
						case *ast.StructType:
							u.Kind = "struct"
						case *ast.InterfaceType:
							u.Kind = "interface"
						}
					}
					res.Units = append(res.Units, u)
				}
			}
		}
		out.Encode(res)
	}
}
