package spec

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// --set overrides are applied to the YAML node tree before decoding, so that the values
// they bring are validated like any other. A set may replace an existing value (checked
// against the type of the value it replaces), or create a key the schema knows (listed
// as patterns, see jobKeys) or a key inside a free-form map.

// seg is one step of a --set path: a mapping key or a list index.
type seg struct {
	key   string
	index int
	isIdx bool
}

// parseSetPath splits "a.b[1].c" into segments.
func parseSetPath(s string) ([]seg, bool) {
	if s == "" {
		return nil, false
	}
	var segs []seg
	for _, part := range strings.Split(s, ".") {
		name, rest, hasIdx := strings.Cut(part, "[")
		if name == "" || strings.ContainsAny(name, "]") {
			return nil, false
		}
		segs = append(segs, seg{key: name})
		for hasIdx {
			num, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil || i < 0 || (after != "" && after[0] != '[') {
				return nil, false
			}
			segs = append(segs, seg{index: i, isIdx: true})
			hasIdx, rest = after != "", strings.TrimPrefix(after, "[")
		}
	}
	return segs, true
}

// fieldPath renders segments as a field path: keys joined by dots, indices as [i].
func fieldPath(segs []seg) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case s.isIdx:
			fmt.Fprintf(&b, "[%d]", s.index)
		case i > 0:
			b.WriteString("." + s.key)
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// parseSetValue reads a --set value as YAML: a scalar, or a flow collection such as
// {type: uri_file, path: ./x}. Anything else (invalid YAML, several lines, "a: b") is
// taken as a plain string.
func parseSetValue(raw string) *yaml.Node {
	str := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: raw}
	if strings.TrimSpace(raw) == "" || strings.ContainsAny(raw, "\n\r") {
		return str
	}
	var doc yaml.Node
	if err := safeUnmarshal([]byte(raw), &doc); err != nil || len(doc.Content) != 1 {
		return str
	}
	switch v := doc.Content[0]; {
	case v.Kind == yaml.ScalarNode, v.Style&yaml.FlowStyle != 0:
		return v
	}
	return str // "a: b" or "- a" read as text, not as block collections
}

// applySets applies each override to the document's root mapping; known lists the key
// patterns the schema allows creating: "*" matches any key, "{}" an existing entry.
func (d *decoder) applySets(root *yaml.Node, sets, known []string) {
	for _, s := range sets {
		key, raw, ok := strings.Cut(s, "=")
		segs, valid := parseSetPath(strings.TrimSpace(key))
		if !ok || !valid || segs[0].isIdx {
			d.errorf(nil, "--set "+s, "expected key.path=value")
			continue
		}
		v := parseSetValue(raw)
		d.markSet(v)
		d.applySet(root, segs, v, raw, known)
	}
}

// markSet marks a value from --set and everything under it.
func (d *decoder) markSet(n *yaml.Node) {
	if n == nil || d.fromSet[n] {
		return
	}
	d.fromSet[n] = true
	for _, c := range n.Content {
		d.markSet(c)
	}
}

func (d *decoder) applySet(root *yaml.Node, segs []seg, v *yaml.Node, raw string, known []string) {
	node := root
	for i, s := range segs {
		last, at := i == len(segs)-1, "--set "+fieldPath(segs[:i+1])
		node = resolve(node)
		if s.isIdx {
			switch {
			case node.Kind != yaml.SequenceNode:
				d.errorf(nil, at, "%s is not a list", fieldPath(segs[:i]))
				return
			case s.index >= len(node.Content):
				d.errorf(nil, at, "no such index (%s has %d items)", fieldPath(segs[:i]), len(node.Content))
				return
			}
			if last {
				d.replace(&node.Content[s.index], segs, v, raw)
				return
			}
			node = node.Content[s.index]
			continue
		}
		if isNull(node) && creatable(known, segs, i+1) {
			*node = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: node.Line, Column: node.Column}
			d.fromSet[node] = true
		}
		if node.Kind != yaml.MappingNode {
			d.errorf(nil, at, "%s is not a mapping", fieldPath(segs[:i]))
			return
		}
		idx := keyIndex(node, s.key)
		switch {
		case idx >= 0 && last:
			d.replace(&node.Content[idx+1], segs, v, raw)
			return
		case idx >= 0:
			node = node.Content[idx+1]
		case !creatable(known, segs, i+1):
			d.noSuchKey(node, segs[:i+1], known)
			return
		default:
			if newEntry(known, segs, i+1) {
				d.warnf(nil, "--set "+fieldPath(segs[:i+1]), "adds %s %q (%s)", entryWhat(segs[:i]), s.key, entriesText(node, fieldPath(segs[:i])))
			}
			child := v
			if !last {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				d.fromSet[child] = true
			}
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.key}
			d.fromSet[k] = true
			node.Content = append(node.Content, k, child)
			node = child
		}
	}
}

// keyIndex returns the index in n.Content of key's key node, or -1.
func keyIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == key {
			return i
		}
	}
	return -1
}

// newEntry reports whether the key segs[n-1] that --set creates is an entry the user names (a
// new input, output or step, as az's --set adds a key to any mapping): said in a warning, for
// a misspelt name is added too.
func newEntry(known []string, segs []seg, n int) bool {
	for _, pat := range known {
		p := strings.Split(pat, ".")
		if len(p) >= n && p[n-1] == "{}" && patternMatches(p, segs[:n]) {
			return true
		}
	}
	return false
}

// entryWhat names an entry of the mapping at parent ("inputs": "an input").
func entryWhat(parent []seg) string {
	if len(parent) == 0 {
		return "an entry"
	}
	switch parent[len(parent)-1].key {
	case "inputs":
		return "an input"
	case "outputs":
		return "an output"
	case "jobs":
		return "a step"
	}
	return "an entry"
}

// entriesText lists a mapping's keys for the warning of a new entry.
func entriesText(n *yaml.Node, path string) string {
	var have []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode {
			have = append(have, k.Value)
		}
	}
	if len(have) == 0 {
		return path + " had none"
	}
	return path + " had: " + strings.Join(have, ", ")
}

// creatable reports whether the schema lets --set create the key segs[n-1] (the keys
// before it exist already).
func creatable(known []string, segs []seg, n int) bool {
	for _, pat := range known {
		if patternMatches(strings.Split(pat, "."), segs[:n]) {
			return true
		}
	}
	return false
}

func patternMatches(p []string, segs []seg) bool {
	if len(p) < len(segs) {
		return false
	}
	for j, s := range segs {
		switch {
		case s.isIdx:
			return false
		case p[j] == "*":
		case p[j] == "{}": // an entry the user names (an input, an output, a step): any key
		case p[j] != s.key:
			return false
		}
	}
	return true
}

// noSuchKey reports a --set key that is neither present nor creatable.
func (d *decoder) noSuchKey(parent *yaml.Node, segs []seg, known []string) {
	var have []string
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if k := resolve(parent.Content[i]); k != nil && k.Kind == yaml.ScalarNode {
			have = append(have, k.Value)
		}
	}
	candidates := append([]string(nil), have...)
	for _, pat := range known {
		p := strings.Split(pat, ".")
		if len(p) >= len(segs) && patternMatches(p[:len(segs)-1], segs[:len(segs)-1]) {
			candidates = append(candidates, p[len(segs)-1])
		}
	}
	msg := "no such key"
	if s := closest(segs[len(segs)-1].key, candidates); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	if len(segs) > 1 {
		parentPath := fieldPath(segs[:len(segs)-1])
		if len(have) == 0 {
			msg += fmt.Sprintf(" (%s is empty)", parentPath)
		} else {
			msg += fmt.Sprintf(" (%s has: %s)", parentPath, strings.Join(have, ", "))
		}
	}
	d.errorf(nil, "--set "+fieldPath(segs), "%s", msg)
}

// replace puts a --set value in place of an existing one, after checking that it has the
// type of the value it replaces.
func (d *decoder) replace(slot **yaml.Node, segs []seg, v *yaml.Node, raw string) {
	old := resolve(*slot)
	path := fieldPath(segs)
	input := len(segs) == 2 && segs[0].key == "inputs"
	// Convenience: `--set inputs.data=./other` on a data input object replaces its path
	// (to change other keys, name them: inputs.data.mode=download); on a literal input
	// object (type: number, ...) it replaces its value.
	if input && old.Kind == yaml.MappingNode && v.Kind == yaml.ScalarNode {
		key := "path"
		if t := lookup(old, "type"); t != nil && isLiteralType(matchEnum(t.Value, inputTypes)) {
			key = "value"
		}
		if i := keyIndex(old, key); i >= 0 {
			old.Content[i+1] = v
		} else {
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
			d.fromSet[k] = true
			old.Content = append(old.Content, k, v)
		}
		return
	}
	if old != nil && old.Kind == yaml.ScalarNode && !isNull(old) {
		switch want, got := old.ShortTag(), v.ShortTag(); {
		case want == "!!int" && got != "!!int":
			d.expected(v, path, "integer")
			return
		case want == "!!float" && got != "!!int" && got != "!!float":
			d.expected(v, path, "number")
			return
		case want == "!!bool" && got != "!!bool":
			d.expected(v, path, "boolean")
			return
		case want == "!!str" && v.Kind != yaml.ScalarNode && !input:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: raw}
			d.fromSet[v] = true
		case want == "!!float" && got == "!!int" && input:
			v.Tag = "!!float" // a number literal input stays a number
		case want == "!!str" && input && v.Kind == yaml.ScalarNode:
			v.Tag, v.Style = "!!str", 0 // a string literal input stays a string
		}
	}
	*slot = v
}
