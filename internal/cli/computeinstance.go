package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

// newComputeInstanceCmds are the verbs of compute instances (docs/instances.md).
func newComputeInstanceCmds(env *Env) []*cobra.Command {
	return []*cobra.Command{
		newInstanceActionCmd(env, "start", "Start a stopped compute instance (its node, then its setup scripts)",
			"  hangar compute start dev1"),
		newInstanceActionCmd(env, "stop", "Stop a compute instance (refused while it runs jobs, unless --force)",
			"  hangar compute stop dev1\n  hangar compute stop dev1 --force   # cancels its jobs"),
		newInstanceActionCmd(env, "restart", "Stop a compute instance and start it again",
			"  hangar compute restart dev1"),
		newInstanceLogsCmd(env),
		newConnectSSHCmd(env),
	}
}

func newInstanceActionCmd(env *Env, action, short, example string) *cobra.Command {
	var name string
	var force bool
	cmd := leaf[*api.Instance]{
		Use:     action + " NAME",
		Short:   short,
		Example: example,
		ask: func(ctx context.Context, c *api.Client, _ []string) (*api.Instance, error) {
			return c.Instances.Action(ctx, name, action, force)
		},
		human: func(w io.Writer, in *api.Instance) error {
			_, err := fmt.Fprintf(w, "Compute instance %s: %s (%s)\n", in.Name, in.State, in.Reason)
			return err
		},
	}.cmd(env)
	addComputeArg(env, cmd, &name, "compute instance")
	if action == "stop" {
		cmd.Flags().BoolVar(&force, "force", false, "also when jobs run on it: they are canceled")
	}
	return cmd
}

// showInstance prints a compute instance: its target's settings and its life.
func showInstance(w io.Writer, c *api.Compute, in *api.Instance) error {
	pairs := [][2]string{
		{"Name", c.Name}, {"Type", c.Type}, {"State", in.State}, {"Reason", in.Reason},
		{"Since", fmtTime(&in.Since)}, {"Owner", in.Owner}, {"Idle", in.Idle},
	}
	if in.IdleShutdownMinutes > 0 {
		pairs = append(pairs, [2]string{"Idle shutdown", fmt.Sprintf("after %d minutes", in.IdleShutdownMinutes)})
	} else {
		pairs = append(pairs, [2]string{"Idle shutdown", "off"})
	}
	if s := c.Spec; s != nil && s.Instance != nil {
		pairs = append(pairs, [2]string{"Size", s.Instance.Size}, [2]string{"Provider", s.Instance.Provider.Type})
	}
	node := "none"
	if in.Node != "" {
		node = in.Node + " (" + in.NodeState + ")"
	}
	pairs = append(pairs, [2]string{"Node", node}, [2]string{"Active runs", strconv.Itoa(c.ActiveRuns)})
	for _, s := range in.Schedules {
		pairs = append(pairs, [2]string{"Schedule", s})
	}
	for _, s := range in.Scripts {
		st := s.Status
		if s.ExitCode != nil {
			st += fmt.Sprintf(", exit code %d", *s.ExitCode)
		}
		pairs = append(pairs, [2]string{"Setup script", fmt.Sprintf("%s: run %s, %s", s.Kind, s.Run, st)})
	}
	pairs = append(pairs, [2]string{"SSH", in.SSH})
	if in.SSHHostKey != "" {
		pairs = append(pairs, [2]string{"SSH host key", in.SSHHostKey})
	}
	pairs = append(pairs, [2]string{"Jupyter", in.Jupyter})
	return kv(w, pairs)
}

// withJupyterURL says where to open a running Jupyter: the server's address and its path.
func withJupyterURL(in *api.Instance, server string) {
	if in.JupyterPath != "" {
		in.Jupyter = "running: " + strings.TrimSuffix(server, "/") + in.JupyterPath
	}
}

// instanceView is what compute show -o json prints for an instance.
type instanceView struct {
	api.Compute
	Instance *api.Instance `json:"instance"`
}

func newInstanceLogsCmd(env *Env) *cobra.Command {
	var name string
	var raw bool
	cmd := &cobra.Command{
		Use:     "logs NAME",
		Short:   "Print the output of a compute instance's setup scripts",
		Example: "  hangar compute logs dev1",
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			in, err := c.Instances.Get(cmd.Context(), name)
			if err != nil {
				return err
			}
			if len(in.Scripts) == 0 {
				fmt.Fprintf(env.Stderr, "compute instance %s has run no setup script\n", name)
				return nil
			}
			out := newRunOutput(env.Stdout, raw) // termsafe.go
			for _, s := range in.Scripts {
				if err := printScriptLog(cmd.Context(), c, s, out); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	addComputeArg(env, cmd, &name, "compute instance")
	addRawFlag(cmd, &raw)
	return cmd
}

// printScriptLog prints one setup script's output under a header naming it and its outcome.
func printScriptLog(ctx context.Context, c *api.Client, s api.InstanceScript, out runOutput) error {
	head := fmt.Sprintf("==> %s (run %s): %s", s.Kind, s.Run, s.Status)
	if s.ExitCode != nil {
		head += fmt.Sprintf(", exit code %d", *s.ExitCode)
	}
	fmt.Fprintln(out.w, head)
	var after int64
	for {
		rep, err := c.Jobs.Logs(ctx, s.Run, "", after, 0)
		if err != nil {
			return err
		}
		for _, l := range rep.Lines {
			out.line(strings.TrimRight(l.Text, "\n"))
		}
		if len(rep.Lines) == 0 || rep.Next == after {
			return nil
		}
		after = rep.Next
	}
}
