package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
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
	cmd := &cobra.Command{
		Use:     "show",
		Short:   "Show the workspace the CLI talks to: its URL, its MLflow tracking URI and who you are there",
		Example: "  hangar workspace show\n  export MLFLOW_TRACKING_URI=$(hangar workspace show --query mlflow_tracking_uri -o tsv)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if name != "" {
				fmt.Fprintf(env.Stderr, "note: --name %s is az's: the workspace is the one at --workspace or $HANGAR_URL (or the local one)\n", name)
			}
			c, err := env.client(cmd.Context())
			if err != nil {
				return err
			}
			me, err := c.Users.WhoAmI(cmd.Context())
			if err != nil {
				return err
			}
			url := c.BaseURL()
			v := workspaceView{Name: filepath.Base(me.Workspace), URL: url, MLflowTrackingURI: url, DiscoveryURL: url,
				Directory: me.Workspace, User: me.User, Role: me.Role}
			return env.printData(v, func(w io.Writer) error {
				return kv(w, [][2]string{{"Name", v.Name}, {"URL", v.URL}, {"MLflow tracking URI", v.MLflowTrackingURI},
					{"Directory", v.Directory}, {"You", fmt.Sprintf("%s (%s)", v.User, v.Role)}})
			})
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "az's workspace name: ignored, with a note")
	return cmd
}
