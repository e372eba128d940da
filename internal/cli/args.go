package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
)

// nameArg is the object a verb acts on, named as its first argument (hangar job show NAME) or
// with -n/--name, as before.
type nameArg struct {
	name string
	what string // "job", "compute target", ...
}

// addNameArg gives cmd a name argument and -n/--name; complete, when set, lists the names the
// shell may offer.
func addNameArg(cmd *cobra.Command, what string, complete func(ctx context.Context, c *api.Client, prefix string) ([]string, error), env *Env) *nameArg {
	a := &nameArg{what: what}
	cmd.Flags().StringVarP(&a.name, "name", "n", "", what+" name (or give it as the first argument)")
	cmd.Args = nameArgs(&a.name, what)
	if complete != nil {
		cmd.ValidArgsFunction = env.completer(complete)
		_ = cmd.RegisterFlagCompletionFunc("name", env.completer(complete))
	}
	return a
}

// nameArgs takes the name from the first argument into *name (set by -n/--name otherwise), and
// refuses a command line that names none, or two.
func nameArgs(name *string, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) > 1:
			return usageError("%s takes one %s name, not %d: %s", cmd.CommandPath(), what, len(args), strings.Join(args, " "))
		case len(args) == 1 && *name != "" && *name != args[0]:
			return usageError("two %s names: %q and --name %q; give one", what, args[0], *name)
		case len(args) == 1:
			*name = args[0]
		case *name == "":
			return usageError("which %s? %s NAME (or --name NAME)", what, cmd.CommandPath())
		}
		return nil
	}
}

// completer answers the shell's completion with names from the workspace; when the workspace
// cannot be reached it offers nothing rather than files.
func (e *Env) completer(list func(ctx context.Context, c *api.Client, prefix string) ([]string, error)) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		c, err := e.runningClient(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names, err := list(ctx, c, prefix)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// jobNames lists job names starting with prefix, newest first.
func jobNames(ctx context.Context, c *api.Client, prefix string) ([]string, error) {
	p, err := c.Jobs.ListPage(ctx, api.JobListQuery{Query: prefix, Limit: 200, Archived: "all"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range p.Runs {
		if strings.HasPrefix(r.ID, prefix) {
			out = append(out, r.ID)
		}
	}
	return out, nil
}

// addComputeArg gives a verb on one compute target its NAME argument, offered from the
// workspace's targets, and -n/--name; what names it in errors and help ("compute instance").
func addComputeArg(env *Env, cmd *cobra.Command, name *string, what string) {
	cmd.Flags().StringVarP(name, "name", "n", "", what+" name (or give it as the first argument)")
	cmd.Args = nameArgs(name, what)
	cmd.ValidArgsFunction = env.completer(computeNames)
}

// computeNames lists compute target names starting with prefix.
func computeNames(ctx context.Context, c *api.Client, prefix string) ([]string, error) {
	cs, err := c.Computes.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ct := range cs {
		if strings.HasPrefix(ct.Name, prefix) {
			out = append(out, ct.Name)
		}
	}
	return out, nil
}

// completerAny is completer for a verb that takes several names.
func (e *Env) completerAny(list func(ctx context.Context, c *api.Client, prefix string) ([]string, error)) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	one := e.completer(list)
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return one(cmd, nil, prefix)
	}
}
