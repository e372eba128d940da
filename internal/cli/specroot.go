package cli

import (
	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/spec"
)

// addSpecRootFlag adds --spec-root to a command that reads a spec file: the folder the files
// the spec names and Hangar reads into it (conda_file, requirements, component and environment
// files, setup scripts) or uploads with its code (additional_includes) may come from. Without it they must be in the spec file's own folder, so that a
// spec from elsewhere cannot publish the user's files to the workspace (docs/schema.md).
func addSpecRootFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "spec-root", "", "folder the files the spec names (conda_file, requirements, component and environment files, additional_includes, setup scripts) may be read from (default: the spec file's folder)")
}

// specFiles is the spec's reading rules for --spec-root's value.
func specFiles(root string) []spec.FileOption {
	if root == "" {
		return nil
	}
	return []spec.FileOption{spec.Root(root)}
}
