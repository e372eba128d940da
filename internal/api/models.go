package api

import "github.com/hangar-ml/hangar/internal/model"

// CreateModelRequest registers a model version. Manifest is set when the client uploaded the
// files at Spec.Path (a local path, then only shown); otherwise Spec.Path is a job output URI.
type CreateModelRequest struct {
	Spec     model.Spec `json:"spec"`
	Manifest string     `json:"manifest,omitempty"`
}

// ArchiveModelRequest is the archive request of models (ArchiveVersionRequest).
type ArchiveModelRequest = ArchiveVersionRequest

// ModelClient registers, lists, shows and archives model versions.
type ModelClient = VersionClient[model.Version, CreateModelRequest]
