package api

import "github.com/hangar-ml/hangar/internal/component"

// CreateComponentRequest registers a component version: the decoded file, its code folder
// already uploaded (Spec.Job.CodeSnapshot, and each pipeline step's Spec.CodeSnapshot), and the
// file as the user named it (shown by component show).
type CreateComponentRequest struct {
	Spec   component.Spec `json:"spec"`
	Source string         `json:"source,omitempty"`
}

// ArchiveComponentRequest is the archive request of components (ArchiveVersionRequest).
type ArchiveComponentRequest = ArchiveVersionRequest

// ComponentClient registers, lists, shows and archives component versions.
type ComponentClient = VersionClient[component.Version, CreateComponentRequest]
