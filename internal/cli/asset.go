package cli

import (
	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/asset"
)

// assetTarget is the version a show or download names, for any versioned asset (models, data):
// NAME, NAME:VERSION, NAME@latest or (a model) NAME@ALIAS as the argument, or --name with --version or --label
// latest. A bare name is the latest version.
type assetTarget struct {
	kind                 asset.Kind
	name, version, label string
}

func (m *assetTarget) flags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&m.name, "name", "n", "", m.kind.Noun+" name (or NAME[:VERSION|@latest] as the argument)")
	cmd.Flags().StringVarP(&m.version, "version", "v", "", "version (default: the latest)")
	cmd.Flags().StringVarP(&m.label, "label", "l", "", "label: latest")
	cmd.Args = nameArgs(&m.name, m.kind.Noun)
}

// resolve returns the name and version to ask for ("latest" for the label).
func (m *assetTarget) resolve() (string, string, error) {
	if m.version != "" && m.label != "" {
		return "", "", usageError("give --version or --label, not both")
	}
	if m.label != "" && m.label != "latest" {
		return "", "", usageError("--label: the only label is latest, got %q", m.label)
	}
	r, err := m.kind.ParseRef(m.name, true)
	if err != nil {
		return "", "", usageError("%v", err)
	}
	if !r.Latest && (m.version != "" || m.label != "") {
		return "", "", usageError("%s names a version already; leave out --version and --label", m.name)
	}
	version := r.StoreVersion()
	if r.Alias != "" {
		version = "@" + r.Alias // the server resolves it
	}
	if m.version != "" {
		if version, err = m.kind.ParseVersion(m.version); err != nil {
			return "", "", usageError("--version: %v", err)
		}
	}
	return r.Name, version, nil
}
