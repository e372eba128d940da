package spec

import (
	"fmt"
	"iter"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/asset"
)

// decoder walks a yaml.Node tree and collects every problem instead of stopping at the
// first. Its helpers each decode one kind of value at a field path; specs are decoded
// by composing them with field tables (see mapping), never by yaml struct decoding.
type decoder struct {
	file     string // the file as the user named it, for messages
	baseDir  string // absolute directory that relative paths resolve against
	errs     ErrorList
	warnings []string
	// fromSet marks nodes that came from --set: their problems say "(from --set)"
	// instead of a line number.
	fromSet map[*yaml.Node]bool
	budget  int // nodes anyValue may still visit (alias expansion guard)
	// prefix is prepended to every field path: a pipeline step is decoded by the decoders
	// of a whole job, its problems named jobs.<step>.<field>.
	prefix string
	depth  int // how many component files deep this decoder reads
	// root is the folder (absolute, links resolved) that the files the spec names must be in
	// (confine.go); rootWhat says what it is, for messages.
	root, rootWhat string

	// The decoders of each noun (nouns.go): they share this decoder's state and its
	// primitives (scalars, mappings, paths, problems) and reach one another through it.
	jobs      *jobDecoder
	sweeps    *sweepDecoder
	pipelines *pipelineDecoder
	parallel  *parallelDecoder
	serving   *servingDecoder
	computes  *computeDecoder
	instances *instanceDecoder
	assets    *assetDecoder
}

func newDecoder(file, baseDir string) *decoder {
	d := &decoder{file: file, baseDir: baseDir, fromSet: map[*yaml.Node]bool{}, budget: 100_000,
		root: realDir(baseDir), rootWhat: "the folder of " + filepath.Base(file)}
	d.jobs = &jobDecoder{d}
	d.sweeps = &sweepDecoder{d}
	d.pipelines = &pipelineDecoder{d}
	d.parallel = &parallelDecoder{d}
	d.serving = &servingDecoder{d}
	d.computes = &computeDecoder{d}
	d.instances = &instanceDecoder{d}
	d.assets = &assetDecoder{d}
	return d
}

// fields is a mapping's field table: the decoder for each known key. A nil decoder
// accepts the key and ignores its value.
type fields map[string]func(n *yaml.Node, path string)

type pair struct{ key, value *yaml.Node }

// problem builds an Error located at n (no location when n is nil).
func (d *decoder) problem(n *yaml.Node, path, msg string) *Error {
	full := d.prefix
	if path != "" {
		full = join(d.prefix, path)
	}
	e := &Error{File: d.file, Path: full, Msg: msg}
	switch {
	case n == nil:
	case d.fromSet[n]:
		e.Msg += " (from --set)"
	default:
		e.Line = n.Line
	}
	return e
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.errs = append(d.errs, d.problem(n, path, fmt.Sprintf(format, args...)))
}

func (d *decoder) warnf(n *yaml.Node, path, format string, args ...any) {
	d.warnings = append(d.warnings, d.problem(n, path, fmt.Sprintf(format, args...)).Error())
}

// expected reports that n is not the kind of value the field needs.
func (d *decoder) expected(n *yaml.Node, path, what string) {
	d.errorf(n, path, "expected %s, got %s", what, describe(n))
}

// required reports a missing field; parent is the mapping that lacks it (nil at the top).
func (d *decoder) required(parent *yaml.Node, path string) {
	d.errorf(parent, path, "required")
}

// join appends a key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve follows aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// mergedPairs lists a mapping's key/value pairs, explicit keys first, then those pulled in
// by YAML merge keys (<<) that the mapping does not override. dups holds repeated
// explicit keys and bad holds keys that are not scalars.
func mergedPairs(n *yaml.Node) (pairs []pair, dups, bad []*yaml.Node) {
	budget := maxMergedPairs
	return collectPairs(n, 0, &budget)
}

// maxMergedPairs bounds the work merge keys can cause (aliases can multiply it).
const maxMergedPairs = 10_000

func collectPairs(n *yaml.Node, depth int, budget *int) (pairs []pair, dups, bad []*yaml.Node) {
	seen := map[string]bool{}
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			bad = append(bad, n.Content[i])
		case k.ShortTag() == "!!merge":
			merged = append(merged, mergeSources(v, depth+1, budget)...)
		case seen[k.Value]:
			dups = append(dups, k)
		default:
			seen[k.Value] = true
			pairs = append(pairs, pair{k, v})
		}
	}
	for _, p := range merged {
		if !seen[p.key.Value] {
			seen[p.key.Value] = true
			pairs = append(pairs, p)
		}
	}
	return pairs, dups, bad
}

// mergeSources returns the pairs a merge key's value contributes.
func mergeSources(v *yaml.Node, depth int, budget *int) []pair {
	v = resolve(v)
	if v == nil || depth > 8 || *budget <= 0 {
		return nil
	}
	var out []pair
	switch v.Kind {
	case yaml.MappingNode:
		*budget -= len(v.Content)/2 + 1
		ps, _, _ := collectPairs(v, depth, budget)
		out = append(out, ps...)
	case yaml.SequenceNode:
		for _, c := range v.Content {
			out = append(out, mergeSources(c, depth+1, budget)...)
		}
	}
	return out
}

// entries checks that n is a mapping and returns its pairs, reporting duplicate and
// non-scalar keys. It is the helper for maps whose keys the user names (inputs, tags).
func (d *decoder) entries(n *yaml.Node, path string) []pair {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "a mapping")
		return nil
	}
	pairs, dups, bad := mergedPairs(n)
	for _, k := range dups {
		d.errorf(k, join(path, k.Value), "duplicate key")
	}
	for _, k := range bad {
		d.errorf(k, path, "expected a string key, got %s", describe(k))
	}
	return pairs
}

// lookup returns the value of key in mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	pairs, _, _ := mergedPairs(n)
	for _, p := range pairs {
		if p.key.Value == key {
			return resolve(p.value)
		}
	}
	return nil
}

// mapping decodes a mapping with a field table: each present, non-null key is passed to
// its decoder; unknown keys are reported with a suggestion. It returns the present keys'
// values, so that callers can check required fields and cross-field rules.
func (d *decoder) mapping(n *yaml.Node, path string, fs fields) map[string]*yaml.Node {
	got := map[string]*yaml.Node{}
	for _, p := range d.entries(n, path) {
		key := p.key.Value
		decode, known := fs[key]
		if !known {
			d.unknown(p.key, join(path, key), key, fs)
			continue
		}
		v := resolve(p.value)
		if isNull(v) {
			continue
		}
		got[key] = v
		if decode != nil {
			decode(v, join(path, key))
		}
	}
	return got
}

// unknown reports an unknown key, suggesting the closest known one.
func (d *decoder) unknown(k *yaml.Node, path, key string, fs fields) {
	names := make([]string, 0, len(fs))
	for name := range fs {
		if name != "$schema" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	switch {
	case closest(key, names) != "":
		d.errorf(k, path, "unknown field; did you mean %q?", closest(key, names))
	case len(names) <= 12:
		d.errorf(k, path, "unknown field (expected one of: %s)", strings.Join(names, ", "))
	default:
		d.errorf(k, path, "unknown field")
	}
}

// scalar returns n when it is a non-null scalar, and reports what was wanted otherwise.
func (d *decoder) scalar(n *yaml.Node, path, what string) (*yaml.Node, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		d.expected(n, path, what)
		return nil, false
	}
	return n, true
}

// str decodes a string field. Any scalar is accepted as its YAML source text, so that
// `version: 1` reads as "1".
func (d *decoder) str(n *yaml.Node, path string) string {
	if isNull(n) {
		return ""
	}
	s, ok := d.scalar(n, path, "a string")
	if !ok {
		return ""
	}
	return s.Value
}

// text decodes a field whose value is text that a number or a boolean never means (a
// command): YAML reads `command: 123` as an integer and `command: true` as a boolean, and
// taking their source text would run the program 123, or the builtin true. Such a scalar is
// refused with a hint to quote it; any string, plain or quoted, is taken.
func (d *decoder) text(n *yaml.Node, path, what string) string {
	if isNull(n) {
		return ""
	}
	s, ok := d.scalar(n, path, what)
	if !ok {
		return ""
	}
	if tag := s.ShortTag(); tag != "!!str" {
		d.errorf(s, path, "expected %s, got %s %s; quote it (%q) if you mean that text", what, yamlKind(tag), truncate(s.Value), s.Value)
		return ""
	}
	return s.Value
}

// isString reports whether n is a string scalar.
func isString(n *yaml.Node) bool {
	n = resolve(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// yamlKind names the type YAML gives a scalar of tag, for messages.
func yamlKind(tag string) string {
	switch tag {
	case "!!int":
		return "the integer"
	case "!!float":
		return "the number"
	case "!!bool":
		return "the boolean"
	case "!!timestamp":
		return "the timestamp"
	}
	return "a value tagged " + tag
}

// integer decodes a YAML integer (!!int); quoted numbers and floats are refused.
func (d *decoder) integer(n *yaml.Node, path string) (int64, bool) {
	s, ok := d.scalar(n, path, "integer")
	if !ok {
		return 0, false
	}
	var v int64
	if s.ShortTag() != "!!int" || s.Decode(&v) != nil {
		d.expected(s, path, "integer")
		return 0, false
	}
	return v, true
}

// intAtLeast decodes an integer and checks its lower bound.
func (d *decoder) intAtLeast(n *yaml.Node, path string, lo int64) (int64, bool) {
	v, ok := d.integer(n, path)
	if ok && v < lo {
		d.errorf(n, path, "expected integer >= %d, got %d", lo, v)
		return 0, false
	}
	return v, ok
}

// number decodes a finite YAML number (!!int or !!float).
func (d *decoder) number(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "number")
	if !ok {
		return 0, false
	}
	var v float64
	tag := s.ShortTag()
	if (tag != "!!int" && tag != "!!float") || s.Decode(&v) != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		d.expected(s, path, "number")
		return 0, false
	}
	return v, true
}

// boolean decodes a YAML boolean (!!bool).
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path, "boolean")
	if !ok {
		return false, false
	}
	var v bool
	if s.ShortTag() != "!!bool" || s.Decode(&v) != nil {
		d.expected(s, path, "boolean")
		return false, false
	}
	return v, true
}

// enum decodes one of the allowed values, matched ignoring case, "_" and "-" (so
// `UriFolder`, `uri_Folder` and `uri-folder` all read as uri_folder); it returns the
// allowed spelling, or "" after reporting a problem.
func (d *decoder) enum(n *yaml.Node, path string, allowed ...string) string {
	s, ok := d.scalar(n, path, "one of "+strings.Join(allowed, ", "))
	if !ok {
		return ""
	}
	if v := matchEnum(s.Value, allowed); v != "" {
		return v
	}
	d.expected(s, path, "one of "+strings.Join(allowed, ", "))
	return ""
}

// matchEnum returns the allowed value that v spells, or "".
func matchEnum(v string, allowed []string) string {
	key := enumKey(v)
	for _, a := range allowed {
		if enumKey(a) == key {
			return a
		}
	}
	return ""
}

func enumKey(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// stringMap decodes a map of scalars, each value stringified from its source text (null
// reads as ""). Nested mappings and lists are refused.
func (d *decoder) stringMap(n *yaml.Node, path string) map[string]string {
	pairs := d.entries(n, path)
	if len(pairs) == 0 {
		return nil
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		key, v := p.key.Value, resolve(p.value)
		switch {
		case isNull(v):
			out[key] = ""
		case v.Kind != yaml.ScalarNode:
			d.expected(v, join(path, key), "a scalar value")
		default:
			out[key] = v.Value
		}
	}
	return out
}

// stringList decodes a list of scalars as strings.
func (d *decoder) stringList(n *yaml.Node, path string) []string {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.expected(n, path, "a list of strings")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for ip, c := range items(n, path) {
		if s, ok := d.scalar(c, ip, "a string"); ok {
			out = append(out, s.Value)
		}
	}
	return out
}

// meta adds to fs the description, tags and properties every Azure ML resource carries, decoded
// into m.
func (d *decoder) meta(fs fields, m *asset.Meta) {
	fs["description"] = func(n *yaml.Node, p string) { m.Description = d.str(n, p) }
	fs["tags"] = func(n *yaml.Node, p string) { m.Tags = d.stringMap(n, p) }
	fs["properties"] = func(n *yaml.Node, p string) { m.Properties = d.stringMap(n, p) }
}

// list ranges over list n's items, each with its path (path[i]); when n is not a list it
// reports that want was expected and yields nothing.
func (d *decoder) list(n *yaml.Node, path, want string) iter.Seq2[string, *yaml.Node] {
	if n.Kind != yaml.SequenceNode {
		d.expected(n, path, want)
		return none
	}
	return items(n, path)
}

// nonEmptyList is list for a list that must hold one item at least.
func (d *decoder) nonEmptyList(n *yaml.Node, path, want string) iter.Seq2[string, *yaml.Node] {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		d.expected(n, path, want)
		return none
	}
	return items(n, path)
}

// items ranges over a list's items, each with its path (path[i]).
func items(n *yaml.Node, path string) iter.Seq2[string, *yaml.Node] {
	return func(yield func(string, *yaml.Node) bool) {
		for i, c := range n.Content {
			if !yield(fmt.Sprintf("%s[%d]", path, i), c) {
				return
			}
		}
	}
}

func none(func(string, *yaml.Node) bool) {}

// anyValue converts a free-form node to plain Go values (map[string]any, []any, string,
// int64, float64, bool, nil) that encode as JSON. Non-finite floats stay text.
func (d *decoder) anyValue(n *yaml.Node, path string) any {
	n = resolve(n)
	if d.budget--; d.budget == 0 {
		d.errorf(n, path, "too many nested values (alias expansion?)")
	}
	if n == nil || d.budget <= 0 {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		return d.anyMap(n, path)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = d.anyValue(c, fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	}
	return scalarValue(n)
}

func scalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	}
	return n.Value
}

// anyMap decodes a free-form mapping (kept verbatim: services, identity, properties).
func (d *decoder) anyMap(n *yaml.Node, path string) map[string]any {
	pairs := d.entries(n, path)
	if pairs == nil {
		return nil
	}
	out := make(map[string]any, len(pairs))
	for _, p := range pairs {
		out[p.key.Value] = d.anyValue(p.value, join(path, p.key.Value))
	}
	return out
}

// keys returns a map's keys sorted, for messages.
func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// readSpec reads a spec file; a file that cannot be read is an ErrorList naming it.
func readSpec(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, ErrorList{{File: file, Msg: "read: " + unwrapPathError(err).Error()}}
	}
	return data, nil
}

// result is what a Parse function returns once d has read v: v and the warnings, or the
// problems found (and the warnings).
func result[T any](d *decoder, v *T) (*T, []string, error) {
	if err := d.errs.err(); err != nil {
		return nil, d.warnings, err
	}
	return v, d.warnings, nil
}

// parseFile reads file and decodes it with parse, relative paths resolving against its folder.
func parseFile[T any](parse func(file string, data []byte, baseDir string, sets []string, opts ...FileOption) (*T, []string, error),
	file string, sets []string, opts ...FileOption) (*T, []string, error) {
	data, err := readSpec(file)
	if err != nil {
		return nil, nil, err
	}
	return parse(file, data, filepath.Dir(file), sets, opts...)
}
