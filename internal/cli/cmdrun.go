package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

// The shapes most commands share: dial the workspace, ask one thing, print it.

// withClient is a command's RunE that dials the workspace and hands run the client.
func (e *Env) withClient(run func(cmd *cobra.Command, args []string, c *api.Client) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := e.client(cmd.Context())
		if err != nil {
			return err
		}
		return run(cmd, args, c)
	}
}

// fetchAndPrint is a command's RunE that dials the workspace, fetches one value and prints it
// (printData: human calls it a table).
func fetchAndPrint[T any](e *Env, fetch func(ctx context.Context, c *api.Client) (T, error), human func(w io.Writer, v T) error) func(*cobra.Command, []string) error {
	return e.withClient(func(cmd *cobra.Command, _ []string, c *api.Client) error {
		v, err := fetch(cmd.Context(), c)
		if err != nil {
			return err
		}
		return e.printData(v, func(w io.Writer) error { return human(w, v) })
	})
}

// tableOf writes items as a table, one row each.
func tableOf[T any](w io.Writer, header []string, items []T, row func(T) []string) error {
	rows := make([][]string, 0, len(items))
	for _, it := range items {
		rows = append(rows, row(it))
	}
	return table(w, header, rows)
}

// listCmd is a `list` command without flags: it fetches the items and prints a row for each.
func listCmd[T any](env *Env, short, example string, fetch func(context.Context, *api.Client) ([]T, error), header []string, row func(T) []string) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: short, Example: example, Args: cobra.NoArgs,
		RunE: fetchAndPrint(env, fetch, func(w io.Writer, items []T) error { return tableOf(w, header, items, row) }),
	}
}

// namedDelete is a `delete NAME` verb that asks first on a terminal and elsewhere needs --yes.
type namedDelete struct {
	short, long, example string
	question             string // with the name for %s: "Delete secret %s?"
	refusal              string // what a refusal says it would not do, before the name: "delete secret"
	// del deletes name and says so.
	del func(ctx context.Context, c *api.Client, name string) error
}

func (d namedDelete) cmd(env *Env) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use: "delete NAME", Short: d.short, Long: d.long, Example: d.example, Args: cobra.ExactArgs(1),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			name := args[0]
			if err := env.confirm(yes, fmt.Sprintf(d.question, name), d.refusal+" "+name); err != nil {
				return err
			}
			return d.del(cmd.Context(), c, name)
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
