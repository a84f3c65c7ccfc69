// gen-builtin-types: dump, by reflection, how encoding/json sees the Go types of every
// built-in kind of k8s.io/client-go/kubernetes/scheme.Scheme, so that kubectl-fieldown
// (kubectl_fieldown/schema/gotypes.py) can reproduce the API server's Go round trip of an
// object (decode into the typed struct, encode back) without Go.
//
// Built and run by hack/gen-builtin-types.sh (GOPATH mode, offline, with the lab's toolchain
// and Debian's packaged k8s.io sources). Output (stdout): one compact JSON document
//
//	{"generator": {...versions...},
//	 "kinds": {"apps/v1/Deployment": {"type": "io.k8s.api.apps.v1.Deployment", "zero": {...}}},
//	 "types": {"io.k8s.api.apps.v1.Deployment": {"fields": [field, ...]}, ...}}
//
// field: {"name": json name, "type": descriptor, "omitempty"?: true, "omitzero"?: true,
// "isZero"?: true (omitzero decided by the type's IsZero method), "inline"?: type id of the
// embedded struct the field was flattened from}, in encoding order (Go field order, embedded
// structs flattened with encoding/json's dominance rules).
//
// descriptor: {"kind": "struct", "type": id} | {"kind": "ptr"|"slice", "elem": descriptor} |
// {"kind": "map", "elem": descriptor} (string keys) | {"kind": "string"|"int"|"float"|"bool"|
// "bytes"|"interface"} | {"kind": "custom", "type": id, "zero": json.Marshal(new(T)),
// "base": the Go kind class used by omitempty ("struct", "string", "int", "slice", ...),
// "marshal": "json"|"text", "ptrOnly"?: true (methods only on *T)}.
//
// Type ids follow the OpenAPI definition names: k8s.io/api/apps/v1.DeploymentSpec ->
// io.k8s.api.apps.v1.DeploymentSpec.
//
// Everything is sorted (encoding/json sorts map keys) so the output is byte-for-byte
// reproducible.
package main

import (
	"bytes"
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

var (
	marshalerType       = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	unmarshalerType     = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textMarshalerType   = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	textUnmarshalerType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	objectMetaType      = reflect.TypeOf(metav1.ObjectMeta{})
)

// typeID is kube-openapi's ToRESTFriendlyName of "<package path>.<name>".
func typeID(t reflect.Type) string {
	if t.Name() == "" || t.PkgPath() == "" {
		panic(fmt.Sprintf("type %v has no package-qualified name", t))
	}
	parts := strings.Split(t.PkgPath()+"."+t.Name(), "/")
	if strings.Contains(parts[0], ".") {
		d := strings.Split(parts[0], ".")
		for i, j := 0, len(d)-1; i < j; i, j = i+1, j-1 {
			d[i], d[j] = d[j], d[i]
		}
		parts[0] = strings.Join(d, ".")
	}
	return strings.Join(parts, ".")
}

// ---- encoding/json's field resolution (typeFields), minus what the API types never use ----

type jsonField struct {
	name      string
	tag       bool
	index     []int
	typ       reflect.Type // the field's own Go type
	omitEmpty bool
	omitZero  bool
	inline    string // type id of the embedded struct it came from ("" for direct fields)
	viaPtr    bool   // reached through an embedded pointer
}

func parseTag(tag string) (string, map[string]bool) {
	name, rest, _ := strings.Cut(tag, ",")
	opts := map[string]bool{}
	for rest != "" {
		var o string
		o, rest, _ = strings.Cut(rest, ",")
		opts[o] = true
	}
	return name, opts
}

func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c > 127):
			return false
		}
	}
	return true
}

func typeFields(t reflect.Type) []jsonField {
	type pending struct {
		typ    reflect.Type
		index  []int
		inline string
		viaPtr bool
	}
	current := []pending{}
	next := []pending{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []jsonField
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true
			for i := 0; i < f.typ.NumField(); i++ {
				sf := f.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts := parseTag(tag)
				if !isValidTag(name) {
					name = ""
				}
				if opts["string"] {
					panic(fmt.Sprintf("%v.%s: the ,string option is not supported", f.typ, sf.Name))
				}
				index := append(append([]int{}, f.index...), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					tagged := name != ""
					if name == "" {
						name = sf.Name
					}
					fields = append(fields, jsonField{
						name: name, tag: tagged, index: index, typ: sf.Type,
						omitEmpty: opts["omitempty"], omitZero: opts["omitzero"],
						inline: f.inline, viaPtr: f.viaPtr,
					})
					if count[f.typ] > 1 {
						// two copies at the same level annihilate each other below
						fields = append(fields, fields[len(fields)-1])
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, pending{typ: ft, index: index, inline: typeID(ft),
						viaPtr: f.viaPtr || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}
	sort.SliceStable(fields, func(i, j int) bool {
		x, y := fields[i], fields[j]
		if x.name != y.name {
			return x.name < y.name
		}
		if len(x.index) != len(y.index) {
			return len(x.index) < len(y.index)
		}
		if x.tag != y.tag {
			return x.tag
		}
		return lessIndex(x.index, y.index)
	})
	out := fields[:0:0]
	for advance, i := 0, 0; i < len(fields); i += advance {
		fi := fields[i]
		for advance = 1; i+advance < len(fields); advance++ {
			if fields[i+advance].name != fi.name {
				break
			}
		}
		if advance == 1 {
			out = append(out, fi)
			continue
		}
		if dominant, ok := dominantField(fields[i : i+advance]); ok {
			out = append(out, dominant)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessIndex(out[i].index, out[j].index) })
	return out
}

func lessIndex(a, b []int) bool {
	for k, x := range a {
		if k >= len(b) {
			return false
		}
		if x != b[k] {
			return x < b[k]
		}
	}
	return len(a) < len(b)
}

func dominantField(fs []jsonField) (jsonField, bool) {
	if len(fs) > 1 && len(fs[0].index) == len(fs[1].index) && fs[0].tag == fs[1].tag {
		return jsonField{}, false
	}
	return fs[0], true
}

// ---- descriptors ----

type generator struct {
	types   map[string]map[string]any
	typeOf  map[string]reflect.Type
	pending []reflect.Type
	notes   map[string]bool
}

func implements(t, iface reflect.Type) (value, ptr bool) {
	return t.Implements(iface), reflect.PointerTo(t).Implements(iface)
}

func baseKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "struct"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Slice:
		return "slice"
	case reflect.Map:
		return "map"
	case reflect.Array:
		return "array"
	case reflect.Interface:
		return "interface"
	case reflect.Pointer:
		return "ptr"
	}
	panic(fmt.Sprintf("unsupported kind %v of %v", t.Kind(), t))
}

func mustMarshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// custom reports a descriptor for types that encoding/json does not encode structurally.
func (g *generator) custom(t reflect.Type) map[string]any {
	jv, jp := implements(t, marshalerType)
	tv, tp := implements(t, textMarshalerType)
	_, ju := implements(t, unmarshalerType)
	_, tu := implements(t, textUnmarshalerType)
	if !jp && !tp {
		if ju || tu {
			panic(fmt.Sprintf("%v has a custom decoder but no custom encoder", t))
		}
		return nil
	}
	d := map[string]any{
		"kind": "custom",
		"type": typeID(t),
		// through a pointer, as the API server encodes objects: fields are addressable
		"zero": mustMarshal(reflect.New(t).Interface()),
		"base": baseKind(t),
	}
	if jp {
		d["marshal"] = "json"
		if !jv {
			d["ptrOnly"] = true
		}
	} else {
		d["marshal"] = "text"
		if !tv {
			d["ptrOnly"] = true
		}
	}
	g.notes[fmt.Sprintf("%s (%s, base %s, zero %s)", d["type"], d["marshal"], d["base"], d["zero"])] = true
	return d
}

func (g *generator) describe(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Pointer {
		return map[string]any{"kind": "ptr", "elem": g.describe(t.Elem())}
	}
	if d := g.custom(t); d != nil {
		return d
	}
	switch t.Kind() {
	case reflect.Struct:
		id := typeID(t)
		if prev, ok := g.typeOf[id]; ok {
			if prev != t {
				panic(fmt.Sprintf("type id %s names both %v and %v", id, prev, t))
			}
		} else {
			g.typeOf[id] = t
			g.pending = append(g.pending, t)
		}
		return map[string]any{"kind": "struct", "type": id}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && g.custom(t.Elem()) == nil {
			return map[string]any{"kind": "bytes"}
		}
		return map[string]any{"kind": "slice", "elem": g.describe(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("map %v: only string keys are supported", t))
		}
		if jp, tp := implements(t.Key(), textMarshalerType); jp || tp {
			panic(fmt.Sprintf("map %v: TextMarshaler keys are not supported", t))
		}
		return map[string]any{"kind": "map", "elem": g.describe(t.Elem())}
	case reflect.Array:
		panic(fmt.Sprintf("arrays are not supported: %v", t))
	default:
		return map[string]any{"kind": baseKind(t)}
	}
}

func (g *generator) structType(t reflect.Type) map[string]any {
	fields := []map[string]any{}
	for _, f := range typeFields(t) {
		if f.viaPtr {
			panic(fmt.Sprintf("%v.%s: fields of embedded pointers are not supported", t, f.name))
		}
		d := g.describe(f.typ)
		if d["kind"] == "custom" && d["ptrOnly"] == true {
			// fine for struct fields and slice items (addressable), not for map values
			g.notes[fmt.Sprintf("pointer-receiver marshaler in a struct field: %v.%s", t, f.name)] = true
		}
		m := map[string]any{"name": f.name, "type": d}
		if f.omitEmpty {
			m["omitempty"] = true
		}
		if f.omitZero {
			m["omitzero"] = true
			// encoding/json then calls IsZero() (value or pointer receiver) instead of
			// reflect.Value.IsZero
			if _, ok := reflect.PointerTo(f.typ).MethodByName("IsZero"); ok {
				m["isZero"] = true
			}
		}
		if f.inline != "" {
			m["inline"] = f.inline
		}
		fields = append(fields, m)
	}
	return map[string]any{"fields": fields}
}

func checkMapValues(d map[string]any, where string) {
	if d == nil {
		return
	}
	if d["kind"] == "map" {
		if e := d["elem"].(map[string]any); e["kind"] == "custom" && e["ptrOnly"] == true {
			panic(fmt.Sprintf("%s: map of a pointer-receiver marshaler (not addressable)", where))
		}
	}
	if e, ok := d["elem"].(map[string]any); ok {
		checkMapValues(e, where)
	}
}

func main() {
	var k8sVersion, packages string
	flag.StringVar(&k8sVersion, "k8s-version", "", "Kubernetes version of the sources, e.g. 1.36.4")
	flag.StringVar(&packages, "packages", "", "comma-separated name=version of the source packages")
	flag.Parse()
	if k8sVersion == "" {
		fmt.Fprintln(os.Stderr, "-k8s-version is required")
		os.Exit(2)
	}

	g := &generator{types: map[string]map[string]any{}, typeOf: map[string]reflect.Type{}, notes: map[string]bool{}}
	kinds := map[string]any{}
	skipped := map[string][]string{}
	all := scheme.Scheme.AllKnownTypes()
	gvks := make([]string, 0, len(all))
	for gvk, t := range all {
		key := gvk.GroupVersion().String() + "/" + gvk.Kind
		reason := ""
		switch {
		case gvk.Version == kruntime.APIVersionInternal:
			reason = "internal version"
		case t.Kind() != reflect.Struct:
			reason = "not a struct"
		case !strings.HasPrefix(t.PkgPath(), "k8s.io/api/"):
			reason = "not a k8s.io/api type"
		case strings.HasSuffix(gvk.Kind, "List"):
			reason = "list"
		default:
			if f, ok := t.FieldByName("ObjectMeta"); !ok || f.Type != objectMetaType || !strings.HasPrefix(f.Tag.Get("json"), "metadata") {
				reason = "no ObjectMeta (not an object)"
			}
		}
		if reason != "" {
			skipped[reason] = append(skipped[reason], key)
			continue
		}
		gvks = append(gvks, key)
		kinds[key] = map[string]any{
			"type": g.describe(t)["type"],
			"zero": mustMarshal(reflect.New(t).Interface()),
		}
	}
	for len(g.pending) > 0 {
		t := g.pending[0]
		g.pending = g.pending[1:]
		st := g.structType(t)
		for _, f := range st["fields"].([]map[string]any) {
			checkMapValues(f["type"].(map[string]any), typeID(t)+"."+f["name"].(string))
		}
		g.types[typeID(t)] = st
	}

	pkgs := map[string]string{}
	for _, p := range strings.Split(packages, ",") {
		if name, version, ok := strings.Cut(p, "="); ok {
			pkgs[name] = version
		}
	}
	doc := map[string]any{
		"generator": map[string]any{
			"tool":       "hack/gen-builtin-types.sh",
			"scheme":     "k8s.io/client-go/kubernetes/scheme.Scheme",
			"go":         runtime.Version(),
			"kubernetes": k8sVersion,
			"packages":   pkgs,
		},
		"kinds": kinds,
		"types": g.types,
	}
	os.Stdout.Write(mustMarshal(doc))
	os.Stdout.Write([]byte("\n"))

	reasons := make([]string, 0, len(skipped))
	for r := range skipped {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	fmt.Fprintf(os.Stderr, "%d kinds, %d struct types (skipped:", len(kinds), len(g.types))
	for _, r := range reasons {
		fmt.Fprintf(os.Stderr, " %d %s", len(skipped[r]), r)
	}
	fmt.Fprintln(os.Stderr, ")")
	if os.Getenv("VERBOSE") != "" {
		for _, r := range reasons {
			sort.Strings(skipped[r])
			fmt.Fprintf(os.Stderr, "skipped (%s): %s\n", r, strings.Join(skipped[r], " "))
		}
		notes := make([]string, 0, len(g.notes))
		for n := range g.notes {
			notes = append(notes, n)
		}
		sort.Strings(notes)
		for _, n := range notes {
			fmt.Fprintln(os.Stderr, "custom:", n)
		}
	}
}
