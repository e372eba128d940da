package asset

import (
	"fmt"
	"regexp"
	"strings"
)

// Ref names a version: Version set, Latest (the newest version not archived), or Alias (the
// version an alias names now, for kinds that have aliases: models).
type Ref struct {
	Name    string
	Version string
	Latest  bool
	Alias   string
}

func (r Ref) String() string {
	switch {
	case r.Latest:
		return r.Name + "@latest"
	case r.Alias != "":
		return r.Name + "@" + r.Alias
	}
	return r.Name + ":" + r.Version
}

// AliasFault is what is wrong with an alias's name by MLflow's rules (mlflow/utils/validation.py),
// said once here: Hangar's references (CheckAlias) and MLflow's routes (model.CheckNewAlias) each
// put it in their own words.
type AliasFault int

const (
	AliasOK      AliasFault = iota
	AliasEmpty              // no name
	AliasChars              // over 255 characters, or one that is not a letter, digit, _ or -
	AliasLatest             // latest, any case: reserved (@latest names the newest version)
	AliasVersion            // v<digits>: reserved by MLflow for versions
)

// MaxAliasChars is the longest alias.
const MaxAliasChars = 255

var (
	aliasName    = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)
	versionAlias = regexp.MustCompile(`^[vV][0-9]+$`)
)

// CheckAliasFault says what is wrong with an alias's name; reserved says whether the names
// reserved for an alias being set (latest, v<digits>) are refused too (a read or delete of one
// is not).
func CheckAliasFault(alias string, reserved bool) AliasFault {
	switch {
	case alias == "":
		return AliasEmpty
	case len(alias) > MaxAliasChars || !aliasName.MatchString(alias):
		return AliasChars
	case reserved && strings.EqualFold(alias, "latest"):
		return AliasLatest
	case reserved && versionAlias.MatchString(alias):
		return AliasVersion
	}
	return AliasOK
}

// CheckAlias says what is wrong with an alias's name, or returns nil: MLflow's rule, and
// "latest" (any case) and v<digits> are reserved (@latest keeps Azure's meaning).
func CheckAlias(alias string) error {
	switch CheckAliasFault(alias, true) {
	case AliasEmpty, AliasChars:
		return fmt.Errorf("alias %q: expected letters, digits, _ and - (at most 255)", alias)
	case AliasLatest:
		return fmt.Errorf("alias %q: latest (any case) is reserved: @latest names the newest version", alias)
	case AliasVersion:
		return fmt.Errorf("alias %q: v<number> is reserved by MLflow for versions", alias)
	}
	return nil
}

// StoreVersion is the version to ask the store for: the number, or "latest".
func (r Ref) StoreVersion() string {
	if r.Latest {
		return "latest"
	}
	return r.Version
}

// ParseRef reads a reference to a registered asset: name:version, name@latest, name@<alias>
// (kinds with Aliases), either with an azureml: prefix, or an Azure resource id ending in
// /<collection>/<name>/versions/<version>. A
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
		var err error
		if r, err = k.labelRef(name, label); err != nil {
			return Ref{}, fmt.Errorf("%s %s: %w", k.Noun, s, err)
		}
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

// labelRef reads name@label: @latest, or an alias where the kind has them.
func (k Kind) labelRef(name, label string) (Ref, error) {
	switch {
	case label == "latest":
		return Ref{Name: name, Latest: true}, nil
	case !k.Aliases:
		return Ref{}, fmt.Errorf("the only label is @latest, got @%s", label)
	}
	if err := CheckAlias(label); err != nil {
		return Ref{}, err
	}
	return Ref{Name: name, Alias: label}, nil
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
