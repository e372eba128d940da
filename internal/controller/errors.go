package controller

import (
	"fmt"

	"github.com/hangar-ml/hangar/internal/workspace"
)

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

func invalidf(format string, a ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, a...)}
}

func notFoundf(format string, a ...any) error {
	return &Error{Kind: NotFound, Msg: fmt.Sprintf(format, a...)}
}

func conflictf(format string, a ...any) error {
	return &Error{Kind: Conflict, Msg: fmt.Sprintf(format, a...)}
}
