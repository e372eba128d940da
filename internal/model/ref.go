package model

import "github.com/hangar-ml/hangar/internal/asset"

// Ref names a model version: Version set, Latest (the newest version not archived), or Alias
// (the version an MLflow alias names now).
type Ref = asset.Ref

// ParseRef reads a reference to a registered model (asset.Kind.ParseRef): name:version,
// name@latest, name@<alias>, with or without azureml:, or an Azure id ending in /models/<name>/versions/<v>.
func ParseRef(s string, bareIsLatest bool) (Ref, error) { return Kind.ParseRef(s, bareIsLatest) }

// CheckAlias says what is wrong with an alias's name, or returns nil (asset.CheckAlias).
func CheckAlias(alias string) error { return asset.CheckAlias(alias) }
