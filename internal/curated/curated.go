package curated

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Mapping says what the curated environments whose names match Name run in: a registered
// environment of the workspace (Environment.Ref: name, name:version or name@latest) or an
// environment definition of its own (an image, a conda file, pip requirements, an interpreter).
type Mapping struct {
	// Name is a curated environment's name (sklearn-1.5, AzureML-sklearn-1.0-ubuntu20.04-py38-cpu)
	// or a pattern where * stands for any run of characters (sklearn-*). A name matches with or
	// without Azure's AzureML- prefix, in any case.
	Name        string          `json:"name"`
	Environment job.Environment `json:"environment"`
	Description string          `json:"description,omitempty"`
	// Builtin marks a default shipped with Hangar (an owner's mapping of the same name replaces
	// it); Removed an owner's removal of such a default (the name is then unmapped).
	Builtin bool `json:"builtin,omitempty"`
	Removed bool `json:"removed,omitempty"`
}

// Reference says whether an environment reference names a curated (or registry) environment,
// and its name: azureml://registries/<registry>/environments/<name>[/versions/<v>|/labels/<l>],
// or a name Azure reserves for its curated environments (AzureML-<...>, Microsoft<...>) with
// its :version or @label. Versions and labels are not part of the name: a mapping maps them all.
func Reference(ref string) (name string, ok bool) {
	if rest, found := cutPrefixFold(ref, "azureml://registries/"); found {
		parts := strings.Split(rest, "/")
		if len(parts) < 3 || parts[1] != "environments" || parts[2] == "" {
			return "", false
		}
		return parts[2], true
	}
	name = ref
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	} else if i := strings.LastIndex(name, ":"); i > 0 {
		name = name[:i]
	}
	return name, Reserved(name)
}

// Reserved says whether a workspace may not register an environment of this name: Azure keeps
// names starting with AzureML- or Microsoft for its curated environments.
func Reserved(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasPrefix(lower, "azureml-") || strings.HasPrefix(lower, "microsoft")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// CheckName refuses what cannot be a mapping's name: empty, longer than 128 characters, or
// holding other than letters, digits, '.', '_', '-' and '*' (no version, label or path).
func CheckName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("name: expected 1 to 128 characters, got %d", len(name))
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-*", r)
		if !ok {
			return fmt.Errorf("name: %q holds %q; a curated environment's name (sklearn-1.5) or a pattern (sklearn-*) "+
				"holds letters, digits, '.', '_', '-' and '*', without a version, label or registry", name, r)
		}
	}
	return nil
}

// Effective is the mappings in force: the defaults, each replaced by an owner's mapping of the
// same name (in any case) or dropped by its removal, then the owner's other mappings; sorted
// by name.
func Effective(defaults, owned []Mapping) []Mapping {
	byName := map[string]Mapping{}
	for _, m := range defaults {
		byName[strings.ToLower(m.Name)] = m
	}
	for _, m := range owned {
		m.Builtin = false
		if m.Removed {
			delete(byName, strings.ToLower(m.Name))
			continue
		}
		byName[strings.ToLower(m.Name)] = m
	}
	out := make([]Mapping, 0, len(byName))
	for _, m := range byName {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Mapping) int { return cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out
}

// Match picks the mapping of a curated name among ms: the most specific one that matches it
// (with or without its AzureML- prefix, in any case): an exact name first, then the pattern
// with the most characters that are not '*'; ties by name.
func Match(ms []Mapping, name string) (Mapping, bool) {
	var best Mapping
	found := false
	for _, m := range ms {
		if !matches(m.Name, name) {
			continue
		}
		if !found || moreSpecific(m.Name, best.Name) {
			best, found = m, true
		}
	}
	return best, found
}

func matches(pattern, name string) bool {
	p, n := strings.ToLower(pattern), strings.ToLower(name)
	if glob(p, n) {
		return true
	}
	short, ok := strings.CutPrefix(n, "azureml-")
	return ok && glob(p, short)
}

// moreSpecific orders patterns: fewer '*' first, then more literal characters, then by name.
func moreSpecific(a, b string) bool {
	sa, sb := strings.Count(a, "*"), strings.Count(b, "*")
	if (sa == 0) != (sb == 0) {
		return sa == 0
	}
	la, lb := len(a)-sa, len(b)-sb
	if la != lb {
		return la > lb
	}
	return strings.ToLower(a) < strings.ToLower(b)
}

// glob matches name against pattern, where * is any run of characters.
func glob(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(name, mid)
		if i < 0 {
			return false
		}
		name = name[i+len(mid):]
	}
	return strings.HasSuffix(name, last)
}

// RunsIn says what a mapping's environment is, for people.
func RunsIn(e job.Environment) string {
	var parts []string
	if e.Ref != "" {
		parts = append(parts, "environment "+e.Ref)
	}
	if e.Image != "" {
		parts = append(parts, "image "+e.Image)
	}
	if e.CondaSpec != "" {
		parts = append(parts, "a conda file")
	}
	if e.RequirementsText != "" {
		parts = append(parts, "pip requirements "+strings.Join(strings.Fields(e.RequirementsText), " "))
	}
	if e.InterpreterPath != "" {
		parts = append(parts, "interpreter "+e.InterpreterPath)
	}
	if e.UserManagedDependencies {
		parts = append(parts, "the node's own environment")
	}
	if len(parts) == 0 {
		return "the host environment"
	}
	return strings.Join(parts, ", ")
}
