package asset

import (
	"fmt"
	"strings"
)

// Ref names a version: Version set, or Latest (the highest version not archived).
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

// StoreVersion is the version to ask the store for: the number, or "latest".
func (r Ref) StoreVersion() string {
	if r.Latest {
		return "latest"
	}
	return r.Version
}

// ParseRef reads a reference to a registered asset: name:version, name@latest, either with an
// azureml: prefix, or an Azure resource id ending in /<collection>/<name>/versions/<version>. A
// bare name is refused unless bareIsLatest, because a deployment or job pinned to "whatever is
// newest" is a surprise waiting to happen; the CLI's show and download take it as @latest.
func (k Kind) ParseRef(s string, bareIsLatest bool) (Ref, error) {
	ref := strings.TrimSpace(s)
	lower := strings.ToLower(ref)
	switch {
	case strings.HasPrefix(lower, "azureml://registries/"):
		return Ref{}, fmt.Errorf("%s %s is in an Azure ML registry, which a self-hosted workspace cannot reach; register it here with hangar %s create", k.Noun, s, k.Command)
	case strings.HasPrefix(lower, "azureml:/"), strings.HasPrefix(lower, "/subscriptions/"):
		return k.armRef(s, ref)
	case strings.HasPrefix(lower, "azureml:"):
		ref = ref[len("azureml:"):]
	}
	var r Ref
	if name, label, ok := strings.Cut(ref, "@"); ok {
		if label != "latest" {
			return Ref{}, fmt.Errorf("%s %s: the only label is @latest, got @%s", k.Noun, s, label)
		}
		r = Ref{Name: name, Latest: true}
	} else if name, version, ok := strings.Cut(ref, ":"); ok {
		v, err := k.ParseVersion(version)
		if err != nil {
			return Ref{}, fmt.Errorf("%s %s: %w", k.Noun, s, err)
		}
		r = Ref{Name: name, Version: v}
	} else if bareIsLatest {
		r = Ref{Name: ref, Latest: true}
	} else {
		return Ref{}, fmt.Errorf("%s %s: give a version (%s:1) or %s@latest", k.Noun, s, ref, ref)
	}
	if err := k.CheckName(r.Name); err != nil {
		return Ref{}, fmt.Errorf("%s %s: %w", k.Noun, s, err)
	}
	return r, nil
}

// armRef reads the name and version out of an Azure resource id.
func (k Kind) armRef(s, ref string) (Ref, error) {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(ref, "azureml:"), "/"), "/")
	for i := 0; i+3 < len(parts); i++ {
		if strings.EqualFold(parts[i], k.Collection) && strings.EqualFold(parts[i+2], "versions") && i+4 == len(parts) {
			v, err := k.ParseVersion(parts[i+3])
			if err != nil {
				return Ref{}, fmt.Errorf("%s %s: %w", k.Noun, s, err)
			}
			if err := k.CheckName(parts[i+1]); err != nil {
				return Ref{}, fmt.Errorf("%s %s: %w", k.Noun, s, err)
			}
			return Ref{Name: parts[i+1], Version: v}, nil
		}
	}
	return Ref{}, fmt.Errorf("%s %s: expected an id ending in /%s/<name>/versions/<version>", k.Noun, s, k.Collection)
}
