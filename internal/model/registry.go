package model

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/hangar-ml/hangar/internal/asset"
)

// The rules of MLflow's model registry (mlflow/utils/validation.py,
// mlflow/entities/model_registry/model_version_stages.py) that Hangar's registry keeps: for
// registry tags, aliases and stages, whoever writes them (MLflow's clients, the CLI). The
// errors' words are MLflow's, which MLflow's clients show as they are.

// MLflow's stages of a version, in the order latest_versions lists them. StageArchived is
// Hangar's archive; None is neither a kept stage nor archived.
const (
	StageNone       = "None"
	StageStaging    = "Staging"
	StageProduction = "Production"
	StageArchived   = "Archived"
)

// Stages are MLflow's four stages.
var Stages = []string{StageNone, StageStaging, StageProduction, StageArchived}

// CanonicalStage is one of MLflow's four stages, matched without regard to case.
func CanonicalStage(s string) (string, error) {
	for _, st := range Stages {
		if strings.EqualFold(s, st) {
			return st, nil
		}
	}
	return "", fmt.Errorf("Invalid Model Version stage: %s. Value must be one of None, Staging, Production, Archived.", s)
}

// RegistryStage is the MLflow stage a version is in: Archived when archived, else its kept stage, else
// None.
func (v Version) RegistryStage() string {
	switch {
	case v.Archived:
		return StageArchived
	case v.MLflowStage != "":
		return v.MLflowStage
	}
	return StageNone
}

// MLflow's limits on registry tags.
const (
	MaxRegistryTagKey   = 250
	MaxRegistryTagValue = 100_000
)

var registryTagKey = regexp.MustCompile(`^[/\w.\- :]*$`)

// CheckRegistryTag refuses a tag MLflow refuses: an empty key, one too long or with other
// characters, one that normalizes to another path (a/../b), a value too long.
func CheckRegistryTag(key, value string) error {
	switch {
	case key == "":
		return errors.New("Missing value for required parameter 'key'. See the API docs for more information about request parameters.")
	case len(key) > MaxRegistryTagKey:
		return fmt.Errorf("'key' exceeds the maximum length of %d characters", MaxRegistryTagKey)
	case len(value) > MaxRegistryTagValue:
		return fmt.Errorf("'value' exceeds the maximum length of %d characters", MaxRegistryTagValue)
	case !registryTagKey.MatchString(key) || pathNotUnique(key):
		return fmt.Errorf("Invalid value \"%s\" for parameter 'key' supplied: Names may only contain alphanumerics, underscores (_), dashes (-), periods (.), spaces ( ), colon(:) and slashes (/).", key)
	}
	return nil
}

// pathNotUnique is MLflow's path_not_unique: a name that normalizes to another, or leaves its
// root.
func pathNotUnique(name string) bool {
	n := path.Clean(name)
	return n != name || n == "." || strings.HasPrefix(n, "..") || strings.HasPrefix(n, "/")
}

// MaxAliasChars is the longest alias.
const MaxAliasChars = asset.MaxAliasChars

// CheckAliasName refuses an alias name MLflow refuses to read or delete, in MLflow's words:
// empty, too long, or with characters other than alphanumerics, _ and - (CheckAlias is the same
// rule for Hangar's references, in Hangar's).
func CheckAliasName(alias string) error { return mlflowAliasError(alias, false) }

// CheckNewAlias is CheckAliasName for an alias being set: latest (any case) and v<digits> are
// reserved too.
func CheckNewAlias(alias string) error { return mlflowAliasError(alias, true) }

// mlflowAliasError is asset.CheckAliasFault in MLflow's words.
func mlflowAliasError(alias string, reserved bool) error {
	switch asset.CheckAliasFault(alias, reserved) {
	case asset.AliasEmpty:
		return errors.New("Registered model alias name cannot be empty.")
	case asset.AliasChars:
		return fmt.Errorf("Invalid alias name: '%s'. Names may only contain alphanumerics, underscores (_), and dashes (-).", alias)
	case asset.AliasLatest:
		return errors.New("'latest' alias name (case insensitive) is reserved.")
	case asset.AliasVersion:
		return fmt.Errorf("Version alias name '%s' is reserved.", alias)
	}
	return nil
}
