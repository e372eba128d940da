package model

import (
	"fmt"
	"strings"
)

// Ref names a model version: Version set, or Latest (the highest version not archived).
type Ref struct {
	Name    string
	Version string
	Latest  bool
}

func (r Ref) String() string {
	if r.Latest {
		return r.Name + "@latest"
	}
	return r.Name + ":" + r.Version
}

// ParseRef reads a reference to a registered model: name:version, name@latest, either with an
// azureml: prefix, or an Azure resource id ending in /models/<name>/versions/<version>. A bare
// name is refused unless bareIsLatest, because a deployment pinned to "whatever is newest" is
// a surprise waiting to happen; the CLI's show and download take it as @latest.
func ParseRef(s string, bareIsLatest bool) (Ref, error) {
	ref := strings.TrimSpace(s)
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "azureml://registries/"):
		return Ref{}, fmt.Errorf("model %s is in an Azure ML registry, which a self-hosted workspace cannot reach; register it here with hangar model create", s)
	case strings.HasPrefix(lower, "azureml:/"), strings.HasPrefix(lower, "/subscriptions/"):
		return armRef(s, ref)
	case strings.HasPrefix(lower, "azureml:"):
		ref = ref[len("azureml:"):]
	}
	var r Ref
	if name, label, ok := strings.Cut(ref, "@"); ok {
		if label != "latest" {
			return Ref{}, fmt.Errorf("model %s: the only label is @latest, got @%s", s, label)
		}
		r = Ref{Name: name, Latest: true}
	} else if name, version, ok := strings.Cut(ref, ":"); ok {
		v, err := ParseVersion(version)
		if err != nil {
			return Ref{}, fmt.Errorf("model %s: %w", s, err)
		}
		r = Ref{Name: name, Version: v}
	} else if bareIsLatest {
		r = Ref{Name: ref, Latest: true}
	} else {
		return Ref{}, fmt.Errorf("model %s: give a version (%s:1) or %s@latest", s, ref, ref)
	}
	if err := CheckName(r.Name); err != nil {
		return Ref{}, fmt.Errorf("model %s: %w", s, err)
	}
	return r, nil
}

// armRef reads the name and version out of an Azure resource id.
func armRef(s, ref string) (Ref, error) {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(ref, "azureml:"), "/"), "/")
	for i := 0; i+3 < len(parts); i++ {
		if strings.EqualFold(parts[i], "models") && strings.EqualFold(parts[i+2], "versions") && i+4 == len(parts) {
			v, err := ParseVersion(parts[i+3])
			if err != nil {
				return Ref{}, fmt.Errorf("model %s: %w", s, err)
			}
			if err := CheckName(parts[i+1]); err != nil {
				return Ref{}, fmt.Errorf("model %s: %w", s, err)
			}
			return Ref{Name: parts[i+1], Version: v}, nil
		}
	}
	return Ref{}, fmt.Errorf("model %s: expected an id ending in /models/<name>/versions/<version>", s)
}
