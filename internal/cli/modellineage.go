package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/model"
)

// modelShown is what `model show` answers: the version's fields, and under "lineage" the run
// it was registered from (code snapshot, environment, data inputs), the aliases naming it and
// the deployments serving it (null from a server that predates lineage).
type modelShown struct {
	*model.Version
	Lineage *api.ModelLineage `json:"lineage"`
}

// newModelShowCmd is the asset kinds' show (assetCommands.showCmd) with the version's lineage.
func newModelShowCmd(env *Env) *cobra.Command {
	m := assetTarget{kind: model.Kind}
	var name, version string
	cmd := leaf[*modelShown]{
		Use:   "show NAME[:VERSION|@latest]",
		Short: "Show a model version (default: the latest), where it came from and what serves it",
		Long: `Show a model version, and its lineage: the run it was registered from (with that run's code
snapshot, environment and input data), the MLflow aliases that name it, and the online and batch
deployments serving it (by its version, by @latest, or by an alias), each with the ref as the
deployment names it and the version it resolved to.`,
		Example: "  hangar model show mnist\n  hangar model show mnist:2 -o json\n  hangar model show --name mnist --version 2",
		check: func(*cobra.Command, []string) (err error) {
			name, version, err = m.resolve()
			return err
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*modelShown, error) {
			v, err := c.Models.Get(ctx, name, version)
			if err != nil {
				return nil, err
			}
			l, err := c.ModelLineage.Get(ctx, v.Name, v.Version)
			if api.IsNotFound(err) { // the version is there: a server older than the lineage route
				return &modelShown{Version: v}, nil
			}
			if err != nil {
				return nil, fmt.Errorf("lineage of model %s version %s: %w", v.Name, v.Version, err)
			}
			return &modelShown{Version: v, Lineage: l}, nil
		},
		human: func(w io.Writer, s *modelShown) error {
			if err := showModel(w, s.Version); err != nil || s.Lineage == nil {
				return err
			}
			return showLineage(w, s.Lineage)
		},
	}.cmd(env)
	m.flags(cmd)
	return cmd
}

// showLineage writes a version's run and the deployments serving it (its aliases are the
// version's own, which showModel writes).
func showLineage(w io.Writer, l *api.ModelLineage) error {
	section(w, "Lineage", lineageLines(l.Run))
	deps := make([]string, 0, len(l.Deployments))
	for _, d := range l.Deployments {
		state := ""
		if d.State != "" {
			state = ", " + d.State
		}
		deps = append(deps, fmt.Sprintf("%s %s/%s: %s (version %s%s)", d.Kind, d.Endpoint, d.Deployment, d.Ref, d.Version, state))
	}
	if len(deps) == 0 {
		deps = []string{"none"}
	}
	section(w, "Deployments", deps)
	return nil
}

// lineageLines say which run a version came from, and that run's code, environment and data.
func lineageLines(r *api.LineageRun) []string {
	if r == nil {
		return []string{"files uploaded from the client (no run)"}
	}
	run := "Run: " + r.Name
	if r.Deleted {
		return []string{run + " (deleted)", "Output: " + r.Output}
	}
	if r.DisplayName != "" && r.DisplayName != r.Name {
		run += " (" + r.DisplayName + ")"
	}
	run += ", " + string(r.Status)
	if r.ExperimentName != "" {
		run += ", experiment " + r.ExperimentName
	}
	code := r.CodeSnapshot
	if code == "" {
		code = "none (the job had no code)"
	}
	lines := []string{run, "Output: " + r.Output, "Code snapshot: " + code, "Environment: " + lineageEnvironmentText(r.Environment)}
	if len(r.Inputs) == 0 {
		return append(lines, "Input data: none")
	}
	lines = append(lines, "Input data:")
	for _, in := range r.Inputs {
		lines = append(lines, fmt.Sprintf("  %s (%s): %s", in.Name, in.Type, in.Path))
	}
	return lines
}

// lineageEnvironmentText names a run's environment: name:version, an inline image or definition, or
// the host's.
func lineageEnvironmentText(e api.LineageEnvironment) string {
	switch {
	case e.Name != "":
		return e.Name + ":" + e.Version
	case e.Ref != "":
		return e.Ref
	case e.Image != "":
		return "inline, image " + e.Image
	case e.Inline:
		return "inline"
	}
	return "none (the host's)"
}
