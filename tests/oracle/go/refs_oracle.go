// Call edges by go/types (issue 47): every call and composite literal of the files named on
// stdin (relative to -root), type-checked package by package (a folder's files of one
// package name, its in-package tests with them; build constraints as this machine's), and
// the object go/types binds its name to. JSON Lines: file, line, col, name, kind (call,
// new), decl {file, line, name, kind: func or type} (file null: the standard library's, a
// builtin, a variable; decl null: bound to nothing). The tree's own packages are found by
// go.mod's module path; the standard library is read from source; any other import is an
// empty package (its uses bind to nothing, as a missing library does).
//
//	go run tests/oracle/go/refs_oracle.go -root TREE < files
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type decl struct {
	File *string `json:"file"`
	Line int     `json:"line"`
	Name string  `json:"name"`
	Kind string  `json:"kind"`
}

type site struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	Decl *decl  `json:"decl"`
}

var (
	root    string
	module  string
	fset    = token.NewFileSet()
	std     types.Importer
	byDir   = map[string][]string{} // folder -> its .go files (relative), as named on stdin
	checked = map[string]*types.Package{}
	parsed  = map[string]*ast.File{}
	infos   []*types.Info
	units   [][]*ast.File
)

type treeImporter struct{}

func (treeImporter) Import(path string) (*types.Package, error) {
	if module != "" && (path == module || strings.HasPrefix(path, module+"/")) {
		dir := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if dir == "" {
			dir = "."
		}
		if p := checkDir(dir, false); p != nil {
			return p, nil
		}
	}
	if !strings.Contains(strings.Split(path, "/")[0], ".") {
		if p, err := std.Import(path); err == nil {
			return p, nil
		}
	}
	parts := strings.Split(path, "/")
	p := types.NewPackage(path, parts[len(parts)-1])
	p.MarkComplete()
	return p, nil
}

func parse(rel string) *ast.File {
	if f, ok := parsed[rel]; ok {
		return f
	}
	f, _ := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
	parsed[rel] = f
	return f
}

// checkDir type-checks a folder's package (external: its x_test package), once.
func checkDir(dir string, external bool) *types.Package {
	key := dir + map[bool]string{true: "#x", false: ""}[external]
	if p, ok := checked[key]; ok {
		return p
	}
	checked[key] = nil // a cycle: the importer sees none
	var files []*ast.File
	for _, rel := range byDir[dir] {
		ok, err := build.Default.MatchFile(filepath.Join(root, dir), filepath.Base(rel))
		if err != nil || !ok {
			continue
		}
		f := parse(rel)
		if f == nil || strings.HasSuffix(f.Name.Name, "_test") != external {
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: treeImporter{}, Error: func(error) {}}
	path := module + "/" + dir
	if dir == "." {
		path = module
	}
	p, _ := conf.Check(path, fset, files, info)
	checked[key] = p
	infos = append(infos, info)
	units = append(units, files)
	return p
}

func rel(pos token.Pos) *string {
	name := fset.Position(pos).Filename
	r, err := filepath.Rel(root, name)
	if name == "" || err != nil || strings.HasPrefix(r, "..") {
		return nil
	}
	r = filepath.ToSlash(r)
	return &r
}

func declOf(obj types.Object) *decl {
	if obj == nil {
		return nil
	}
	switch o := obj.(type) {
	case *types.Func:
		return &decl{rel(o.Pos()), fset.Position(o.Pos()).Line, o.Name(), "func"}
	case *types.TypeName:
		return &decl{rel(o.Pos()), fset.Position(o.Pos()).Line, o.Name(), "type"}
	}
	return &decl{nil, 0, obj.Name(), "other"}
}

func nameOf(e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			return x.Sel
		default:
			return nil
		}
	}
}

func main() {
	flag.StringVar(&root, "root", ".", "the tree")
	flag.Parse()
	root, _ = filepath.Abs(root)
	if data, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
				module = strings.Trim(f[1], "\"")
			}
		}
	}
	std = importer.ForCompiler(fset, "source", nil)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		r := strings.TrimSpace(in.Text())
		if strings.HasSuffix(r, ".go") {
			d := filepath.ToSlash(filepath.Dir(r))
			byDir[d] = append(byDir[d], r)
		}
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		checkDir(d, false)
		checkDir(d, true)
	}
	out := json.NewEncoder(os.Stdout)
	for i, files := range units {
		info := infos[i]
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				var id *ast.Ident
				kind := "call"
				switch x := n.(type) {
				case *ast.CallExpr:
					id = nameOf(x.Fun)
				case *ast.CompositeLit:
					if x.Type != nil {
						id, kind = nameOf(x.Type), "new"
					}
				}
				if id == nil {
					return true
				}
				p := fset.Position(id.Pos())
				r := rel(id.Pos())
				if r == nil {
					return true
				}
				out.Encode(site{*r, p.Line, p.Column - 1, id.Name, kind, declOf(info.Uses[id])})
				return true
			})
		}
	}
}
