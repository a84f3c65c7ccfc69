// port-smd-tests reads structured-merge-diff's merge/*_test.go with go/parser and writes their
// TestCase tables as JSON (stdout), so that the tests run them through kubectl_fieldown: nothing is
// transcribed by hand. Run by hack/port-upstream-tests.py with the lab's Go.
//
// Usage: port-smd-tests DIR          (DIR: sigs.k8s.io/structured-merge-diff/v6/merge)
//        port-smd-tests -tables DIR  (DIR: .../typed: every package-level `var xCases = []T{...}`
//                                     table as data, positional struct literals named by T's fields)
//
// A case whose operations or expectations use something this extractor cannot express as data
// (converters, ChangeParser, *Object operations, ignored fields) is written with "unsupported" set
// to the reason, so that the report can count it.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

type parserDef struct {
	YAML string `json:"yaml"`
	Type string `json:"type"`
}

type tcase struct {
	File        string                 `json:"file"`
	Func        string                 `json:"func"`
	Name        string                 `json:"name"`
	Parser      string                 `json:"parser"`
	Ops         []map[string]any       `json:"ops"`
	Object      *string                `json:"object"`
	APIVersion  string                 `json:"apiVersion"`
	Managed     map[string]any         `json:"managed"`
	Converter   string                 `json:"converter,omitempty"`
	Ignored     map[string]any         `json:"ignored,omitempty"`
	Unsupported string                 `json:"unsupported,omitempty"`
	ExpectError bool                   `json:"expectError,omitempty"`
	Extra       map[string]interface{} `json:"-"`
}

type unsupported struct{ why string }

func fail(format string, a ...any) { panic(unsupported{fmt.Sprintf(format, a...)}) }

func str(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, err := strconv.Unquote(v.Value)
			if err != nil {
				fail("string %s: %v", v.Value, err)
			}
			return s
		}
	case *ast.CallExpr: // typed.YAMLObject(`...`), fieldpath.APIVersion("v1"), fmt.Sprintf(`...%s`, v1)
		if callName(v) == "fmt.Sprintf" {
			args := make([]any, 0, len(v.Args)-1)
			for _, a := range v.Args[1:] {
				args = append(args, str(a))
			}
			return fmt.Sprintf(str(v.Args[0]), args...)
		}
		if len(v.Args) == 1 {
			return str(v.Args[0])
		}
	case *ast.Ident:
		if c, ok := bindings[v.Name]; ok {
			return c
		}
		if c, ok := consts[v.Name]; ok {
			return c
		}
	case *ast.BinaryExpr:
		if v.Op == token.ADD {
			return str(v.X) + str(v.Y)
		}
	}
	fail("not a string: %T", e)
	return ""
}

var consts = map[string]string{}

// bindings: the parameters of a table helper (testX(t, v1, v2, v3 fieldpath.APIVersion)) while one
// combination of the versions its caller loops over is extracted
var bindings = map[string]string{}

func lit(e ast.Expr) any {
	switch v := e.(type) {
	case *ast.BasicLit:
		switch v.Kind {
		case token.STRING:
			return str(v)
		case token.INT:
			n, _ := strconv.ParseInt(v.Value, 0, 64)
			return n
		case token.FLOAT:
			f, _ := strconv.ParseFloat(v.Value, 64)
			return f
		}
	case *ast.Ident:
		switch v.Name {
		case "true":
			return true
		case "false":
			return false
		case "nil":
			return nil
		}
	case *ast.UnaryExpr:
		if v.Op == token.SUB {
			switch x := lit(v.X).(type) {
			case int64:
				return -x
			case float64:
				return -x
			}
		}
	}
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 && (callName(c) == "float64" || callName(c) == "int64") {
		x := lit(c.Args[0])
		if callName(c) == "float64" {
			if n, ok := x.(int64); ok {
				return float64(n)
			}
		}
		return x
	}
	fail("not a literal: %T", e)
	return nil
}

func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	}
	return ""
}

// element: {"f": name} | {"v": value} | {"k": {name: value}} | {"i": n}
func pathOf(c *ast.CallExpr) []map[string]any {
	if n := callName(c); n != "_P" && n != "fieldpath.MakePathOrDie" {
		fail("path %s", n)
	}
	var out []map[string]any
	for _, a := range c.Args {
		switch v := a.(type) {
		case *ast.BasicLit:
			if v.Kind == token.STRING {
				out = append(out, map[string]any{"f": str(v)})
			} else if v.Kind == token.INT {
				n, _ := strconv.Atoi(v.Value)
				out = append(out, map[string]any{"i": n})
			} else {
				fail("path element %s", v.Value)
			}
		case *ast.Ident:
			out = append(out, map[string]any{"f": str(v)})
		case *ast.CallExpr:
			switch callName(v) {
			case "fmt.Sprintf":
				out = append(out, map[string]any{"f": str(v)})
			case "_V", "value.NewValueInterface":
				out = append(out, map[string]any{"v": lit(v.Args[0])})
			case "_KBF", "fieldpath.KeyByFields":
				key := map[string]any{}
				for i := 0; i+1 < len(v.Args); i += 2 {
					key[str(v.Args[i])] = lit(v.Args[i+1])
				}
				out = append(out, map[string]any{"k": key})
			default:
				fail("path element %s", callName(v))
			}
		default:
			fail("path element %T", a)
		}
	}
	return out
}

func setOf(e ast.Expr) [][]map[string]any {
	c, ok := e.(*ast.CallExpr)
	if !ok || (callName(c) != "_NS" && callName(c) != "fieldpath.NewSet") {
		fail("set %T", e)
	}
	var out [][]map[string]any
	for _, a := range c.Args {
		pc, ok := a.(*ast.CallExpr)
		if !ok {
			fail("set member %T", a)
		}
		out = append(out, pathOf(pc))
	}
	return out
}

func fields(cl *ast.CompositeLit) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			fail("positional field")
		}
		out[kv.Key.(*ast.Ident).Name] = kv.Value
	}
	return out
}

func typeName(cl *ast.CompositeLit) string {
	switch t := cl.Type.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

func operation(e ast.Expr) map[string]any {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		fail("operation %T", e)
	}
	kind := typeName(cl)
	f := fields(cl)
	if kind == "ChangeParser" {
		id, ok := f["Parser"].(*ast.Ident)
		if !ok || len(f) != 1 {
			fail("operation ChangeParser")
		}
		return map[string]any{"op": kind, "parser": id.Name}
	}
	if kind != "Apply" && kind != "ForceApply" && kind != "Update" && kind != "ExtractApply" {
		fail("operation %s", kind)
	}
	op := map[string]any{"op": kind}
	for k, v := range f { // every field ends in the map, whatever the order
		switch k {
		case "Manager":
			op["manager"] = str(v)
		case "APIVersion":
			op["apiVersion"] = str(v)
		case "Object":
			op["object"] = str(v)
		case "Conflicts":
			var conflicts []map[string]any
			for _, el := range v.(*ast.CompositeLit).Elts {
				cf := fields(el.(*ast.CompositeLit))
				conflicts = append(conflicts, map[string]any{"manager": str(cf["Manager"]),
					"path": pathOf(cf["Path"].(*ast.CallExpr))})
			}
			op["conflicts"] = conflicts
		default:
			fail("operation field %s", k)
		}
	}
	return op
}

func managed(e ast.Expr) map[string]any {
	out := map[string]any{}
	for _, el := range e.(*ast.CompositeLit).Elts {
		kv := el.(*ast.KeyValueExpr)
		c, ok := kv.Value.(*ast.CallExpr)
		if !ok || callName(c) != "fieldpath.NewVersionedSet" {
			fail("managed value")
		}
		out[str(kv.Key)] = map[string]any{"paths": setOf(c.Args[0]), "apiVersion": str(c.Args[1]),
			"applied": lit(c.Args[2])}
	}
	return out
}

func oneCase(file, fn, name string, cl *ast.CompositeLit) (tc tcase) {
	tc = tcase{File: file, Func: fn, Name: name}
	defer func() {
		if r := recover(); r != nil {
			u, ok := r.(unsupported)
			if !ok {
				panic(r)
			}
			tc.Unsupported = u.why
			tc.Ops, tc.Managed, tc.Object, tc.APIVersion, tc.Ignored = nil, nil, nil, "", nil
		}
	}()
	f := fields(cl)
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same output on every run, whichever field is unsupported
	for _, k := range keys {
		v := f[k]
		switch k {
		case "Ops":
			for _, o := range v.(*ast.CompositeLit).Elts {
				tc.Ops = append(tc.Ops, operation(o))
			}
		case "Object":
			s := str(v)
			tc.Object = &s
		case "APIVersion":
			tc.APIVersion = str(v)
		case "Managed":
			tc.Managed = managed(v)
		case "IgnoreFilter", "IgnoredFields":
			// version -> fieldpath.NewExcludeSetFilter(set) or the set itself: both leave out the
			// set's paths and everything below them (Comparison.ExcludeFields, ExcludeSetFilter)
			tc.Ignored = map[string]any{}
			for _, el := range v.(*ast.CompositeLit).Elts {
				kv := el.(*ast.KeyValueExpr)
				val := kv.Value
				if c, ok := val.(*ast.CallExpr); ok && callName(c) == "fieldpath.NewExcludeSetFilter" {
					val = c.Args[0]
				}
				tc.Ignored[str(kv.Key)] = setOf(val)
			}
		default:
			fail("TestCase field %s", k)
		}
	}
	return tc
}

// --- the typed package's tables: generic Go literal -> JSON ---------------------------------------

// structs records, for every struct type of a file, its field names in order (positional literals)
// and, for its []T fields, T (the element type of their composite literals).
func structs(f *ast.File, types map[string][]string) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, sp := range gd.Specs {
			ts := sp.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			var names []string
			elems := map[string]string{}
			for _, fl := range st.Fields.List {
				elem := ""
				if at, ok := fl.Type.(*ast.ArrayType); ok {
					if id, ok := at.Elt.(*ast.Ident); ok {
						elem = id.Name
					}
				}
				for _, n := range fl.Names {
					names = append(names, n.Name)
					if elem != "" {
						elems[n.Name] = elem
					}
				}
			}
			types[ts.Name.Name] = names
			fieldTypes[ts.Name.Name] = elems
		}
	}
}

func value(e ast.Expr, elemType string, types map[string][]string, strs map[string]string) any {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			return str(v)
		}
		return lit(v)
	case *ast.Ident:
		if s, ok := strs[v.Name]; ok {
			return s
		}
		return lit(v)
	case *ast.UnaryExpr:
		if v.Op == token.AND {
			return value(v.X, elemType, types, strs)
		}
		return lit(v)
	case *ast.CallExpr:
		if at, ok := v.Fun.(*ast.ArrayType); ok && len(v.Args) == 1 {
			if id, ok := at.Elt.(*ast.Ident); ok && id.Name == "byte" { // []byte(`...`)
				return str(v.Args[0])
			}
		}
		switch callName(v) {
		case "_NS", "fieldpath.NewSet":
			return map[string]any{"set": setOf(v)}
		case "_P", "fieldpath.MakePathOrDie":
			return map[string]any{"path": pathOf(v)}
		case "typed.YAMLObject":
			return value(v.Args[0], "", types, strs)
		}
		fail("call %s", callName(v))
	case *ast.CompositeLit:
		tname := elemType
		if mt, ok := v.Type.(*ast.MapType); ok { // map[string]struct{...}{"name": {...}}: a table in a Test function
			out := map[string]any{}
			for _, el := range v.Elts {
				kv := el.(*ast.KeyValueExpr)
				item := kv.Value.(*ast.CompositeLit)
				if _, ok := mt.Value.(*ast.StructType); !ok {
					out[str(kv.Key)] = value(item, "", types, strs)
					continue
				}
				fields := map[string]any{}
				for _, f := range item.Elts {
					fkv, ok := f.(*ast.KeyValueExpr)
					if !ok {
						fail("positional field of an anonymous struct")
					}
					fields[fkv.Key.(*ast.Ident).Name] = value(fkv.Value, "", types, strs)
				}
				out[str(kv.Key)] = fields
			}
			return out
		}
		switch t := v.Type.(type) {
		case *ast.ArrayType:
			inner := ""
			if id, ok := t.Elt.(*ast.Ident); ok {
				inner = id.Name
			}
			var out []any
			for _, el := range v.Elts {
				out = append(out, value(el, inner, types, strs))
			}
			return out
		case *ast.Ident:
			tname = t.Name
		}
		names, ok := types[tname]
		if !ok {
			fail("composite of %q", tname)
		}
		out := map[string]any{}
		for i, el := range v.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				name := kv.Key.(*ast.Ident).Name
				out[name] = value(kv.Value, fieldType(tname, name), types, strs)
			} else {
				out[names[i]] = value(el, fieldType(tname, names[i]), types, strs)
			}
		}
		return out
	}
	fail("expression %T", e)
	return nil
}

// fieldTypes: struct name -> field -> the element type name of a []T field
var fieldTypes = map[string]map[string]string{}

func fieldType(structName, field string) string { return fieldTypes[structName][field] }

func tables(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	sort.Strings(files)
	fset := token.NewFileSet()
	types := map[string][]string{}
	strs := map[string]string{}
	data := map[string]string{}
	goStructs := map[string][]map[string]any{}
	var parsed []*ast.File
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			panic(err)
		}
		parsed = append(parsed, f)
		structs(f, types)
		jsonStructs(f, goStructs)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if bl, ok := vs.Values[i].(*ast.BasicLit); ok && bl.Kind == token.STRING {
							strs[n.Name] = str(bl)
						}
						// var xData = []byte(`...`): test data as text (YAML), written as it is
						if c, ok := vs.Values[i].(*ast.CallExpr); ok && strings.HasSuffix(n.Name, "Data") {
							if at, ok := c.Fun.(*ast.ArrayType); ok && len(c.Args) == 1 {
								if id, ok := at.Elt.(*ast.Ident); ok && id.Name == "byte" {
									data[n.Name] = str(c.Args[0])
								}
							}
						}
					}
				}
			}
		}
	}
	out := map[string]any{}
	for i, f := range parsed {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for j, n := range vs.Names {
					if !strings.HasSuffix(n.Name, "Cases") || j >= len(vs.Values) {
						continue
					}
					func() {
						defer func() {
							if r := recover(); r != nil {
								u, ok := r.(unsupported)
								if !ok {
									panic(r)
								}
								out[n.Name] = map[string]any{"unsupported": u.why}
							}
						}()
						out[n.Name] = map[string]any{"file": filepath.Base(files[i]),
							"cases": value(vs.Values[j], "", types, strs)}
					}()
				}
			}
		}
	}
	// `testcases := map[string]struct{...}{...}` in a Test function: the table named by the function
	for i, f := range parsed {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			for _, st := range fd.Body.List {
				as, ok := st.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
					continue
				}
				id, ok := as.Lhs[0].(*ast.Ident)
				cl, ok2 := as.Rhs[0].(*ast.CompositeLit)
				if !ok || !ok2 || id.Name != "testcases" {
					continue
				}
				if mt, ok := cl.Type.(*ast.MapType); !ok {
					continue
				} else if _, ok := mt.Value.(*ast.StructType); !ok {
					continue
				}
				name := fd.Name.Name
				func() {
					defer func() {
						if r := recover(); r != nil {
							u, ok := r.(unsupported)
							if !ok {
								panic(r)
							}
							out[name] = map[string]any{"unsupported": u.why}
						}
					}()
					out[name] = map[string]any{"file": filepath.Base(files[i]), "cases": value(cl, "", types, strs)}
				}()
			}
		}
	}
	if len(data) > 0 {
		out["data"] = data
	}
	if len(goStructs) > 0 {
		out["goStructs"] = goStructs
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

func isTestCaseMap(cl *ast.CompositeLit) bool {
	mt, ok := cl.Type.(*ast.MapType)
	if !ok {
		return false
	}
	switch v := mt.Value.(type) {
	case *ast.Ident:
		return v.Name == "TestCase"
	case *ast.SelectorExpr: // fixture.TestCase
		return v.Sel.Name == "TestCase"
	}
	return false
}

func hasTable(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if cl, ok := n.(*ast.CompositeLit); ok && isTestCaseMap(cl) {
			found = true
		}
		return !found
	})
	return found
}

type combo struct {
	prefix   string
	bindings map[string]string
}

// combinations: one empty combination for a Test function; for a helper with fieldpath.APIVersion
// parameters, every assignment of its caller's `versions := []fieldpath.APIVersion{...}` to them
// (the caller ranges over the list once per parameter), named as its t.Run names them (v1-v2-v3).
func combinations(f *ast.File, fd *ast.FuncDecl) []combo {
	var params []string
	for _, fl := range fd.Type.Params.List {
		if sel, ok := fl.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "APIVersion" {
			for _, n := range fl.Names {
				params = append(params, n.Name)
			}
		}
	}
	if len(params) == 0 {
		return []combo{{"", map[string]string{}}}
	}
	var versions []string
	ranges := 0
	for _, d := range f.Decls {
		caller, ok := d.(*ast.FuncDecl)
		if !ok || caller.Body == nil || caller == fd {
			continue
		}
		calls := false
		ast.Inspect(caller.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == fd.Name.Name {
					calls = true
				}
			}
			return true
		})
		if !calls {
			continue
		}
		ast.Inspect(caller.Body, func(n ast.Node) bool {
			switch v := n.(type) {
			case *ast.AssignStmt:
				if id, ok := v.Lhs[0].(*ast.Ident); ok && id.Name == "versions" {
					for _, el := range v.Rhs[0].(*ast.CompositeLit).Elts {
						versions = append(versions, str(el))
					}
				}
			case *ast.RangeStmt:
				if id, ok := v.X.(*ast.Ident); ok && id.Name == "versions" {
					ranges++
				}
			}
			return true
		})
	}
	if len(versions) == 0 || ranges != len(params) {
		panic(fmt.Sprintf("%s: cannot tell which versions its caller passes", fd.Name.Name))
	}
	out := []combo{{"", map[string]string{}}}
	for _, p := range params {
		var next []combo
		for _, c := range out {
			for _, v := range versions {
				b := map[string]string{p: v}
				for k, x := range c.bindings {
					b[k] = x
				}
				prefix := v
				if c.prefix != "" {
					prefix = c.prefix + "-" + v
				}
				next = append(next, combo{prefix, b})
			}
		}
		out = next
	}
	for i := range out {
		out[i].prefix += "/"
	}
	return out
}

// converterOf: the type name of the converter that test.TestWithConverter(P, C) is given, "" for
// test.Test(P) (the fixture's dummyConverter)
func converterOf(fd *ast.FuncDecl, e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	switch v := e.(type) {
	case *ast.CompositeLit:
		return typeName(v)
	case *ast.Ident:
		name := ""
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok {
				if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == v.Name {
					name = converterOf(fd, as.Rhs[0])
				}
			}
			return true
		})
		if name != "" {
			return name
		}
	}
	panic(fmt.Sprintf("%s: converter %T", fd.Name.Name, e))
}

func tableCases(base string, fd *ast.FuncDecl, prefix string) []tcase {
	var cases []tcase
	// the parser the loop passes to test.Test(P) or test.TestWithConverter(P, C)
	parserName, converter, expectError := "", "", false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		// `if test.Test(p) == nil { t.Fatal(...) }`: every case of the table must fail
		if be, ok := n.(*ast.BinaryExpr); ok && be.Op == token.EQL {
			if id, ok := be.Y.(*ast.Ident); ok && id.Name == "nil" {
				if c, ok := be.X.(*ast.CallExpr); ok {
					if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Test" {
						expectError = true
					}
				}
			}
		}
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Test" || sel.Sel.Name == "TestWithConverter") {
			if id, ok := c.Args[0].(*ast.Ident); ok {
				parserName = id.Name
			}
			if sel.Sel.Name == "TestWithConverter" {
				converter = converterOf(fd, c.Args[1])
			}
		}
		return true
	})
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok || !isTestCaseMap(cl) {
			return true
		}
		for _, el := range cl.Elts {
			kv := el.(*ast.KeyValueExpr)
			name := prefix + str(kv.Key)
			tc := oneCase(base, fd.Name.Name, name, kv.Value.(*ast.CompositeLit))
			tc.Parser = parserName
			tc.ExpectError = expectError
			tc.Converter = converter
			if parserName == "" && tc.Unsupported == "" {
				tc.Unsupported = "no parser found for the test function"
			}
			cases = append(cases, tc)
		}
		return false
	})
	return cases
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-tables" {
		tables(os.Args[2])
		return
	}
	dir := os.Args[1]
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	sort.Strings(files)
	fset := token.NewFileSet()
	parsers := map[string]parserDef{}
	var cases []tcase
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			panic(err)
		}
		base := filepath.Base(path)
		// package-level parsers: var xParser = func() Parser { parser, err := typed.NewParser(`...`) ... parser.Type("t") }()
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
				return true
			}
			var yaml, typ string
			ast.Inspect(vs.Values[0], func(m ast.Node) bool {
				c, ok := m.(*ast.CallExpr)
				if !ok {
					return true
				}
				func() {
					defer func() { _ = recover() }()
					switch callName(c) {
					case "typed.NewParser":
						yaml = str(c.Args[0])
					case "parser.Type":
						typ = str(c.Args[0])
					}
				}()
				return true
			})
			if yaml != "" {
				// a *typed.Parser (no .Type call) picks the type named like each operation's version
				parsers[vs.Names[0].Name] = parserDef{yaml, typ}
			}
			return true
		})
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !hasTable(fd) {
				continue
			}
			// a helper testX(t, v1, v2, v3 fieldpath.APIVersion) holding the table is run by its
			// Test function for every combination of a `versions` list: each combination is a case
			for _, combo := range combinations(f, fd) {
				bindings = combo.bindings
				cases = append(cases, tableCases(base, fd, combo.prefix)...)
			}
			bindings = map[string]string{}
		}
	}
	out := map[string]any{"parsers": parsers, "cases": cases}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

// jsonStructs: the struct types whose fields carry json tags, as the Go types data of the built-in
// kinds describes a type (kubectl_fieldown/data/builtin-go-types-*.json: each field's json name and
// type descriptor), with their patchStrategy/patchMergeKey tags. A type from another package
// (runtime.RawExtension) is a struct without json fields (RawExtension's are all `json:"-"`).
func jsonStructs(f *ast.File, out map[string][]map[string]any) {
	var desc func(owner string, e ast.Expr) map[string]any
	var fieldsOf func(id string, st *ast.StructType) []map[string]any
	desc = func(owner string, e ast.Expr) map[string]any {
		switch t := e.(type) {
		case *ast.Ident:
			switch t.Name {
			case "string", "bool":
				return map[string]any{"kind": t.Name}
			case "int", "int32", "int64", "uint8":
				return map[string]any{"kind": "int"}
			case "float32", "float64":
				return map[string]any{"kind": "float"}
			}
			return map[string]any{"kind": "struct", "type": t.Name}
		case *ast.StarExpr:
			return map[string]any{"kind": "ptr", "elem": desc(owner, t.X)}
		case *ast.ArrayType:
			if id, ok := t.Elt.(*ast.Ident); ok && id.Name == "byte" {
				return map[string]any{"kind": "bytes"}
			}
			return map[string]any{"kind": "slice", "elem": desc(owner, t.Elt)}
		case *ast.MapType:
			return map[string]any{"kind": "map", "elem": desc(owner, t.Value)}
		case *ast.SelectorExpr:
			id := t.X.(*ast.Ident).Name + "." + t.Sel.Name
			if _, ok := out[id]; !ok {
				out[id] = []map[string]any{}
			}
			return map[string]any{"kind": "struct", "type": id}
		case *ast.StructType:
			out[owner] = fieldsOf(owner, t)
			return map[string]any{"kind": "struct", "type": owner}
		case *ast.InterfaceType:
			return map[string]any{"kind": "interface"}
		}
		fail("go type %T", e)
		return nil
	}
	fieldsOf = func(id string, st *ast.StructType) []map[string]any {
		fields := []map[string]any{}
		for _, fl := range st.Fields.List {
			tag := ""
			if fl.Tag != nil {
				tag, _ = strconv.Unquote(fl.Tag.Value)
			}
			get := reflect.StructTag(tag).Get
			for _, n := range fl.Names {
				name := strings.Split(get("json"), ",")[0]
				if name == "-" {
					continue
				}
				if name == "" {
					name = n.Name
				}
				fields = append(fields, map[string]any{"name": name, "type": desc(id+"."+n.Name, fl.Type),
					"patchStrategy": get("patchStrategy"), "patchMergeKey": get("patchMergeKey")})
			}
		}
		return fields
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, sp := range gd.Specs {
			ts := sp.(*ast.TypeSpec)
			st, ok := ts.Type.(*ast.StructType)
			if !ok || st.Fields == nil {
				continue
			}
			tagged := false
			for _, fl := range st.Fields.List {
				if fl.Tag != nil && strings.Contains(fl.Tag.Value, "json:") {
					tagged = true
				}
			}
			if tagged {
				func() {
					defer func() {
						if r := recover(); r != nil {
							if _, ok := r.(unsupported); !ok {
								panic(r)
							}
						}
					}()
					out[ts.Name.Name] = fieldsOf(ts.Name.Name, st)
				}()
			}
		}
	}
}
