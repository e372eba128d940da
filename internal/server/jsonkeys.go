package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Duplicate keys in a JSON body are refused (400 naming the key): encoding/json keeps the last
// one, so a value could pass a check in a proxy (which reads the first, or another spelling)
// and reach a handler as another. Two kinds count: the same key twice in one object, and, in
// an object decoded into a struct, two keys that set the same field (encoding/json matches
// field names regardless of case: "command" and "Command"). In a map (tags, environment
// variables) keys that differ in case are different keys, as they are to everyone else.
//
// The check runs on a body json.Unmarshal accepted (so it is valid JSON), walking the body and
// the Go type it was decoded into side by side; it holds only the keys of the objects open.

// duplicateKeyError is a key given twice in one object of a JSON body: 400.
type duplicateKeyError struct {
	path        string // where the object is ("" the body itself)
	first, then string // the two spellings (equal for an exact duplicate)
}

func (e *duplicateKeyError) Error() string {
	at := "in the JSON body"
	if e.path != "" {
		at = "in " + e.path + " of the JSON body"
	}
	if e.first == e.then {
		return fmt.Sprintf("duplicate key %q %s: each key may appear once in an object", e.first, at)
	}
	return fmt.Sprintf("duplicate key %s: %q and %q set the same field (keys are matched regardless of case); give it once",
		at, e.first, e.then)
}

// checkDuplicateKeys refuses a valid JSON document b that holds a duplicate key, reading it as
// the Go type t it decodes into (nil: unknown, exact duplicates only).
func checkDuplicateKeys(b []byte, t reflect.Type) error {
	d := keyScanner{b: b}
	return d.value(t, "")
}

type keyScanner struct {
	b []byte
	i int
}

func (d *keyScanner) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *keyScanner) value(t reflect.Type, path string) error {
	d.space()
	if d.i >= len(d.b) {
		return nil
	}
	t = decodedType(t)
	switch d.b[d.i] {
	case '{':
		return d.object(t, path)
	case '[':
		return d.array(t, path)
	case '"':
		d.skipString() // a value: nothing to compare, nothing to allocate
	default: // a number, true, false, null
		for d.i < len(d.b) && !strings.ContainsRune(",]} \t\n\r", rune(d.b[d.i])) {
			d.i++
		}
	}
	return nil
}

func (d *keyScanner) object(t reflect.Type, path string) error {
	d.i++ // {
	fields := fieldsOf(t)
	seen := map[string]string{} // what a key sets → the key as written
	for {
		d.space()
		if d.b[d.i] == '}' {
			d.i++
			return nil
		}
		if d.b[d.i] == ',' {
			d.i++
			continue
		}
		key := d.str()
		d.space()
		d.i++ // :
		id, child := key, elemType(t)
		if fields != nil {
			id, child = "", nil // a key no field takes: ignored by the decoder, compared as written
			if f, ok := fields.lookup(key); ok {
				id, child = "\x00"+f.name, f.typ
			}
			if id == "" {
				id = key
			}
		}
		if first, dup := seen[id]; dup {
			return &duplicateKeyError{path: path, first: first, then: key}
		}
		seen[id] = key
		if err := d.value(child, joinPath(path, key)); err != nil {
			return err
		}
	}
}

func (d *keyScanner) array(t reflect.Type, path string) error {
	d.i++ // [
	for n := 0; ; {
		d.space()
		switch d.b[d.i] {
		case ']':
			d.i++
			return nil
		case ',':
			d.i++
			continue
		}
		if err := d.value(elemType(t), path+"["+strconv.Itoa(n)+"]"); err != nil {
			return err
		}
		n++
	}
}

// skipString moves past a string.
func (d *keyScanner) skipString() {
	for d.i++; d.i < len(d.b); d.i++ {
		switch d.b[d.i] {
		case '\\':
			d.i++
		case '"':
			d.i++
			return
		}
	}
}

// str reads a string and returns it unescaped.
func (d *keyScanner) str() string {
	start, escaped := d.i, false
	d.i++ // "
	for d.i < len(d.b) {
		c := d.b[d.i]
		d.i++
		switch {
		case c == '\\':
			escaped = true
			d.i++ // the escaped byte (a \u's digits are plain bytes)
		case c == '"':
			raw := d.b[start:d.i]
			if !escaped {
				return string(raw[1 : len(raw)-1])
			}
			var s string
			_ = json.Unmarshal(raw, &s)
			return s
		}
	}
	return ""
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodedType is t with its pointers taken off, or nil where encoding/json does not decode by
// the type's shape (a custom UnmarshalJSON, json.RawMessage, an interface).
func decodedType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// elemType is what a map's values, or a slice's or array's elements, decode into (nil: unknown).
func elemType(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return t.Elem()
	}
	return nil
}

// jsonField is a struct field as encoding/json names it.
type jsonField struct {
	name  string
	typ   reflect.Type
	depth int
}

// jsonFields are a struct's fields, found by their JSON name as encoding/json finds them: the
// exact name first, else one equal regardless of case.
type jsonFields struct {
	byName map[string]jsonField
	list   []jsonField
}

func (fs *jsonFields) lookup(key string) (jsonField, bool) {
	if f, ok := fs.byName[key]; ok {
		return f, true
	}
	for _, f := range fs.list {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}

var fieldCache sync.Map // reflect.Type → *jsonFields

// fieldsOf returns the JSON fields of struct type t, nil when t is not a struct.
func fieldsOf(t reflect.Type) *jsonFields {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*jsonFields)
	}
	fs := &jsonFields{byName: map[string]jsonField{}}
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case tag == "-" && f.Tag.Get("json") == "-":
			continue
		case f.Anonymous && tag == "" && ft.Kind() == reflect.Struct:
			continue // its fields are promoted: VisibleFields lists them too
		case !f.IsExported():
			continue
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		jf := jsonField{name: name, typ: f.Type, depth: len(f.Index)}
		if old, ok := fs.byName[name]; !ok || jf.depth < old.depth {
			fs.byName[name] = jf
		}
	}
	for _, f := range fs.byName {
		fs.list = append(fs.list, f)
	}
	slices.SortFunc(fs.list, func(a, b jsonField) int { return strings.Compare(a.name, b.name) })
	fieldCache.Store(t, fs)
	return fs
}
