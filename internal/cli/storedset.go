package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// An update with --set and no file (az's `online-deployment update -n D -e E --set
// instance_count=2`) changes the resource the workspace stores: the CLI fetches it, applies the
// overrides to its JSON and sends it back through the route a file update uses, where the server
// checks it as it checks a file's. Paths are Azure's field names (docs/schema.md); a storedKind
// maps those whose stored name differs. A value is read as YAML, as --set on a file does; it
// replaces the value there (a string stays a string, a number must be a number) or adds a key,
// a map's entry included.

// storedKind is what applyStoredSets needs to know of one kind of resource.
type storedKind struct {
	noun string // "online deployment", in messages
	// alias maps a path in Azure's names to the stored JSON's; nil keeps every path.
	alias func(path []string) []string
	// needsFile names the fields a --set without the file cannot change, and why.
	needsFile map[string]string
}

// parseStoredSetPath splits "a.b[1].c".
func parseStoredSetPath(s string) ([]string, error) {
	if s == "" {
		return nil, errors.New("expected key.path=value")
	}
	var out []string
	for _, part := range strings.Split(s, ".") {
		name, rest, hasIdx := strings.Cut(part, "[")
		if name == "" {
			return nil, errors.New("expected key.path=value")
		}
		out = append(out, name)
		for hasIdx {
			num, after, ok := strings.Cut(rest, "]")
			if i, err := strconv.Atoi(num); !ok || err != nil || i < 0 {
				return nil, errors.New("expected key.path=value")
			}
			out = append(out, "["+num+"]")
			hasIdx, rest = strings.HasPrefix(after, "["), strings.TrimPrefix(after, "[")
			if !hasIdx && after != "" {
				return nil, errors.New("expected key.path=value")
			}
		}
	}
	return out, nil
}

// storedSetValue reads a --set value as YAML: a scalar or a flow collection ({a: 1}, [x, y]);
// anything else is the text itself. str is the value as a string, for a field that holds one.
func storedSetValue(raw string) (v any, str string) {
	if strings.TrimSpace(raw) == "" || strings.ContainsAny(raw, "\n\r") {
		return raw, raw
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil || len(doc.Content) != 1 {
		return raw, raw
	}
	n := doc.Content[0]
	if n.Kind != yaml.ScalarNode && n.Style&yaml.FlowStyle == 0 {
		return raw, raw // "a: b" and "- a" are text
	}
	if err := n.Decode(&v); err != nil {
		return raw, raw
	}
	if n.Kind == yaml.ScalarNode {
		return v, n.Value
	}
	return jsonable(v), raw
}

// jsonable turns YAML's decoded maps into JSON's (string keys).
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonable(x)
		}
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = jsonable(x)
		}
	}
	return v
}

// applyStoredSets applies sets to *v (a resource as the API returned it), each checked by
// decoding the result strictly into T: a field T lacks is refused, naming the set.
func applyStoredSets[T any](v *T, sets []string, k storedKind) error {
	doc, err := toJSONMap(v)
	if err != nil {
		return err
	}
	for _, s := range sets {
		key, raw, ok := strings.Cut(s, "=")
		path, err := parseStoredSetPath(strings.TrimSpace(key))
		if !ok || err != nil {
			return usageError("--set %s: expected key.path=value", s)
		}
		shown := strings.Join(path, ".")
		for n := range path {
			if why, ok := k.needsFile[strings.Join(path[:n+1], ".")]; ok {
				return usageError("--set %s: %s", shown, why)
			}
		}
		if k.alias != nil {
			path = k.alias(path)
		}
		if err := setStored[T](doc, path, raw); err != nil {
			return usageError("--set %s: %v", shown, storedDecodeError(err, k.noun))
		}
	}
	return decodeStrict(doc, v)
}

// setStored sets one value and checks that T still decodes; a scalar set where T holds a
// string, and no value was there to say so, is taken as text (--set description=42).
func setStored[T any](doc map[string]any, path []string, raw string) error {
	val, str := storedSetValue(raw)
	if err := setJSONPath(doc, path, val, str); err != nil {
		return err
	}
	err := decodeStrict(doc, new(T))
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Type.Kind().String() == "string" && isScalar(val) {
		if err := setJSONPath(doc, path, str, str); err != nil {
			return err
		}
		err = decodeStrict(doc, new(T))
	}
	return err
}

func toJSONMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeStrict(doc map[string]any, out any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// storedDecodeError says what decoding the changed resource refused, in a user's words.
func storedDecodeError(err error, noun string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("expected %s, got %s", jsonKindName(te.Type.Kind().String()), te.Value)
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return fmt.Errorf("a stored %s has no field %s", noun, strings.TrimPrefix(msg, "json: unknown field "))
	}
	return err
}

func jsonKindName(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "bool":
		return "true or false"
	case kind == "string":
		return "a string"
	case kind == "map", kind == "struct":
		return "a mapping"
	case kind == "slice":
		return "a list"
	}
	return kind
}

// setJSONPath puts val at path in doc, creating the mappings on the way; the value it replaces
// gives its type: a string takes any scalar as text (str), a number or a boolean only its kind.
func setJSONPath(doc map[string]any, path []string, val any, str string) error {
	var parent any = doc
	for i, seg := range path {
		last := i == len(path)-1
		if idx, ok := listIndex(seg); ok {
			list, isList := parent.([]any)
			if !isList {
				return fmt.Errorf("%s is not a list", strings.Join(path[:i], "."))
			}
			if idx >= len(list) {
				return fmt.Errorf("no such index (%s has %d items)", strings.Join(path[:i], "."), len(list))
			}
			if last {
				v, err := replaceValue(list[idx], val, str)
				list[idx] = v
				return err
			}
			parent = list[idx]
			continue
		}
		m, isMap := parent.(map[string]any)
		if !isMap {
			return fmt.Errorf("%s is not a mapping", strings.Join(path[:i], "."))
		}
		if last {
			v, err := replaceValue(m[seg], val, str)
			m[seg] = v
			return err
		}
		next := m[seg]
		if next == nil {
			next = map[string]any{}
			if _, isIdx := listIndex(path[i+1]); isIdx {
				return fmt.Errorf("%s is not a list", strings.Join(path[:i+1], "."))
			}
			m[seg] = next
		}
		parent = next
	}
	return nil
}

func listIndex(seg string) (int, bool) {
	if !strings.HasPrefix(seg, "[") {
		return 0, false
	}
	i, err := strconv.Atoi(strings.Trim(seg, "[]"))
	return i, err == nil
}

// replaceValue is the value val becomes in place of old.
func replaceValue(old, val any, str string) (any, error) {
	scalar := isScalar
	switch old := old.(type) {
	case nil:
		return val, nil
	case string:
		if !scalar(val) {
			return old, errors.New("expected a string, got a collection")
		}
		return str, nil
	case json.Number:
		switch val.(type) {
		case int, int64, float64, uint64:
			return val, nil
		}
		return old, fmt.Errorf("expected a number, got %q", str)
	case bool:
		if _, ok := val.(bool); !ok {
			return old, fmt.Errorf("expected true or false, got %q", str)
		}
	case map[string]any:
		if scalar(val) {
			keys := make([]string, 0, len(old))
			for k := range old {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			with := ""
			if len(keys) > 0 {
				with = " (with " + strings.Join(keys, ", ") + ")"
			}
			return old, fmt.Errorf("is a mapping%s: set one of its keys, or give a mapping such as {key: value}", with)
		}
	case []any:
		if _, ok := val.([]any); !ok {
			return old, errors.New("is a list: give a list such as [a, b], or set an item with [index]")
		}
	}
	return val, nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}
