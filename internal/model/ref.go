package model

import "github.com/hangar-ml/hangar/internal/asset"

// Ref names a model version: Version set, or Latest (the newest version not archived).
type Ref = asset.Ref

// ParseRef reads a reference to a registered model (asset.Kind.ParseRef): name:version,
// name@latest, with or without azureml:, or an Azure id ending in /models/<name>/versions/<v>.
func ParseRef(s string, bareIsLatest bool) (Ref, error) { return Kind.ParseRef(s, bareIsLatest) }
