package cli

import (
	"cmp"
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

// leaf is a verb that asks the workspace one thing and prints the answer (printData: with -o or
// --query the answer itself, else human's table or text). Use, Short, Long, Example, Args and
// ValidArgsFunction are the command's, as cobra names them; Args defaults to no arguments.
type leaf[T any] struct {
	Use, Short, Long, Example string
	Args                      cobra.PositionalArgs
	ValidArgsFunction         func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective)
	// check, when set, reads the flags and arguments before the workspace is dialed.
	check func(cmd *cobra.Command, args []string) error
	// ask asks the workspace; human writes its answer as a table or text.
	ask   func(ctx context.Context, c *api.Client, args []string) (T, error)
	human func(w io.Writer, v T) error
}

func (l leaf[T]) cmd(env *Env) *cobra.Command {
	args := l.Args
	if args == nil {
		args = cobra.NoArgs
	}
	return &cobra.Command{
		Use: l.Use, Short: l.Short, Long: l.Long, Example: l.Example, Args: args, ValidArgsFunction: l.ValidArgsFunction,
		RunE: func(cmd *cobra.Command, args []string) error {
			if l.check != nil {
				if err := l.check(cmd, args); err != nil {
					return err
				}
			}
			return env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
				v, err := l.ask(cmd.Context(), c, args)
				if err != nil {
					return err
				}
				return env.printData(v, func(w io.Writer) error { return l.human(w, v) })
			})(cmd, args)
		},
	}
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
	return leaf[[]T]{
		Use: "list", Short: short, Example: example,
		ask:   func(ctx context.Context, c *api.Client, _ []string) ([]T, error) { return fetch(ctx, c) },
		human: func(w io.Writer, items []T) error { return tableOf(w, header, items, row) },
	}.cmd(env)
}

// namedDelete is a verb that deletes one named thing (`delete NAME`, or use): it asks first on a
// terminal and elsewhere needs --yes.
type namedDelete struct {
	use                  string // default "delete NAME"
	short, long, example string
	// what, when set, lets the name be given with -n/--name too; it names the thing in errors
	// and help ("size").
	what     string
	question string // with the name for %s: "Delete secret %s?"
	refusal  string // what a refusal says it would not do, before the name: "delete secret"
	// del deletes name and says so.
	del func(ctx context.Context, c *api.Client, name string) error
}

func (d namedDelete) cmd(env *Env) *cobra.Command {
	var name string
	var yes bool
	cmd := &cobra.Command{
		Use: cmp.Or(d.use, "delete NAME"), Short: d.short, Long: d.long, Example: d.example, Args: cobra.ExactArgs(1),
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			if d.what == "" {
				name = args[0]
			}
			if err := env.confirm(yes, fmt.Sprintf(d.question, name), d.refusal+" "+name); err != nil {
				return err
			}
			return d.del(cmd.Context(), c, name)
		}),
	}
	if d.what != "" {
		cmd.Flags().StringVarP(&name, "name", "n", "", d.what+" name (or give it as the first argument)")
		cmd.Args = nameArgs(&name, d.what)
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
