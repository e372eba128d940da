package controller

import "github.com/hangar-ml/hangar/internal/workspace"

// Kind classifies an error for the API layer; the controller's errors and the workspace's are of
// one type.
type Kind = workspace.Kind

// Error kinds.
const (
	Invalid      = workspace.Invalid
	NotFound     = workspace.NotFound
	Conflict     = workspace.Conflict
	Unauthorized = workspace.Unauthorized
)

// Error is a user-facing error of a known kind.
type Error = workspace.Error

// The constructors of an Error are the workspace's.
var (
	invalidf  = workspace.Invalidf
	notFoundf = workspace.NotFoundf
	conflictf = workspace.Conflictf
)
