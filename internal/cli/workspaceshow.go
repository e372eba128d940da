package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

// workspaceView is workspace show's answer, in az ml workspace show's field names where Hangar
// has the same thing (the MLflow tracking URI scripts hand to MLflow clients).
type workspaceView struct {
	Name              string `json:"name"`
	URL               string `json:"url"`
	MLflowTrackingURI string `json:"mlflow_tracking_uri"`
	DiscoveryURL      string `json:"discovery_url"`
	Directory         string `json:"directory"`
	User              string `json:"user"`
	Role              string `json:"role"`
}

func newWorkspaceShowCmd(env *Env) *cobra.Command {
	var name string
	cmd := leaf[workspaceView]{
		Use:     "show",
		Short:   "Show the workspace the CLI talks to: its URL, its MLflow tracking URI and who you are there",
		Example: "  hangar workspace show\n  export MLFLOW_TRACKING_URI=$(hangar workspace show --query mlflow_tracking_uri -o tsv)",
		check: func(*cobra.Command, []string) error {
			if name != "" {
				fmt.Fprintf(env.Stderr, "note: --name %s is az's: the workspace is the one at --workspace or $HANGAR_URL (or the local one)\n", name)
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (workspaceView, error) {
			me, err := c.Users.WhoAmI(ctx)
			if err != nil {
				return workspaceView{}, err
			}
			url := c.BaseURL()
			return workspaceView{Name: filepath.Base(me.Workspace), URL: url, MLflowTrackingURI: url, DiscoveryURL: url,
				Directory: me.Workspace, User: me.User, Role: me.Role}, nil
		},
		human: func(w io.Writer, v workspaceView) error {
			return kv(w, [][2]string{{"Name", v.Name}, {"URL", v.URL}, {"MLflow tracking URI", v.MLflowTrackingURI},
				{"Directory", v.Directory}, {"You", fmt.Sprintf("%s (%s)", v.User, v.Role)}})
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "az's workspace name: ignored, with a note")
	return cmd
}
