package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// assetCommands is what one kind of versioned asset (models, data assets, components) brings to
// the list, show, archive and restore commands they share: its words, its columns and its
// client calls. Create (and download) stay with each kind: their flags and uploads are its own.
type assetCommands[V asset.Versioned] struct {
	kind asset.Kind
	// plural names several in list's help: "models", "data assets".
	plural string
	// example is a name for the help's examples: "mnist".
	example string
	// everyOf ends archive's and restore's short help: "every version of a model".
	everyOf string
	// archiveLong is archive's long help: it says who keeps working with an archived version.
	archiveLong string
	// columns and row make the list table; ARCHIVED is added with --include-archived.
	columns []string
	row     func(V) []string
	show    func(io.Writer, *V) error
	// showCmdOf, when set, makes the kind's show verb instead of showCmd (model show's lineage).
	showCmdOf func(env *Env) *cobra.Command

	// versions picks the kind's typed client (c.Models, c.Data, c.Components).
	versions func(c *api.Client) versionClient[V]
}

// versionClient is what the shared commands ask of a versioned asset kind's typed client.
type versionClient[V any] interface {
	List(ctx context.Context, name string, includeArchived bool) ([]V, error)
	Get(ctx context.Context, name, version string) (*V, error)
	Archive(ctx context.Context, name, version string, archived bool) ([]V, error)
}

// group gives a kind's command its verbs: create, list, show, the kind's extra ones (model
// download), archive and restore.
func (a assetCommands[V]) group(env *Env, cmd, create *cobra.Command, extra ...*cobra.Command) *cobra.Command {
	show := a.showCmd
	if a.showCmdOf != nil {
		show = a.showCmdOf
	}
	cmd.AddCommand(create, a.listCmd(env), show(env))
	cmd.AddCommand(extra...)
	cmd.AddCommand(a.archiveCmd(env, true), a.archiveCmd(env, false))
	return groupCmd(cmd)
}

func (a assetCommands[V]) listCmd(env *Env) *cobra.Command {
	var name string
	var archived bool
	cmd := leaf[[]V]{
		Use:   "list",
		Short: "List " + a.plural + " (the latest version of each), or the versions of one",
		Example: fmt.Sprintf("  hangar %s list\n  hangar %s list --name %s --include-archived -o json",
			a.kind.Command, a.kind.Command, a.example),
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]V, error) {
			return a.versions(c).List(ctx, name, archived)
		},
		human: func(w io.Writer, vs []V) error { return a.table(w, vs, archived) },
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", "list this "+a.kind.Noun+"'s versions")
	cmd.Flags().BoolVar(&archived, "include-archived", false, "include archived versions")
	return cmd
}

func (a assetCommands[V]) table(w io.Writer, vs []V, archived bool) error {
	header := slices.Clone(a.columns)
	if archived {
		header = append(header, "ARCHIVED")
	}
	rows := make([][]string, 0, len(vs))
	for _, v := range vs {
		row := a.row(v)
		if archived {
			row = append(row, fmt.Sprint(v.AssetKey().Archived))
		}
		rows = append(rows, row)
	}
	return table(w, header, rows)
}

func (a assetCommands[V]) showCmd(env *Env) *cobra.Command {
	m := assetTarget{kind: a.kind}
	var name, version string
	cmd := leaf[*V]{
		Use:   "show NAME[:VERSION|@latest]",
		Short: "Show a " + a.kind.Noun + " version (default: the latest)",
		Example: fmt.Sprintf("  hangar %[1]s show %[2]s\n  hangar %[1]s show %[2]s:2 -o yaml\n  hangar %[1]s show --name %[2]s --version 2",
			a.kind.Command, a.example),
		check: func(*cobra.Command, []string) (err error) {
			name, version, err = m.resolve()
			return err
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) (*V, error) {
			return a.versions(c).Get(ctx, name, version)
		},
		human: a.show,
	}.cmd(env)
	m.flags(cmd) // its arguments too
	return cmd
}

func (a assetCommands[V]) archiveCmd(env *Env, archive bool) *cobra.Command {
	var name, version string
	noun := a.kind.Noun
	verb, short, done := "archive", "Archive a "+noun+" version, or "+a.everyOf, "Archived"
	long := a.archiveLong
	if !archive {
		verb, short, done = "restore", "Restore an archived "+noun+" version, or "+a.everyOf, "Restored"
		long = "Undo " + a.kind.Command + " archive: the version is listed again and counts for @latest."
	}
	cmd := leaf[[]V]{
		Use:     verb + " NAME",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  hangar %[1]s %[2]s --name %[3]s --version 1\n  hangar %[1]s %[2]s %[3]s", a.kind.Command, verb, a.example),
		Args:    nameArgs(&name, noun),
		check: func(*cobra.Command, []string) error {
			if version != "" {
				v, err := a.kind.ParseVersion(version)
				if err != nil {
					return usageError("--version: %v", err)
				}
				version = v
			}
			return nil
		},
		ask: func(ctx context.Context, c *api.Client, _ []string) ([]V, error) {
			return a.versions(c).Archive(ctx, name, version, archive)
		},
		human: func(w io.Writer, _ []V) error {
			which := "every version of " + noun + " " + name
			if version != "" {
				which = noun + " " + name + " version " + version
			}
			_, err := fmt.Fprintf(w, "%s %s\n", done, which)
			return err
		},
	}.cmd(env)
	cmd.Flags().StringVarP(&name, "name", "n", "", noun+" name (or give it as the first argument)")
	cmd.Flags().StringVarP(&version, "version", "v", "", "one version (default: every version)")
	return cmd
}

// readAssetFile reads what -f names, with --set applied and its warnings written to warn. With
// no file it is an empty spec that the flags fill, and --set (which changes a file) is refused.
func readAssetFile[S any](file string, sets []string, noun string, parse func(string, []string) (*S, []string, error), warn io.Writer) (*S, error) {
	if file == "" {
		if len(sets) > 0 {
			return nil, usageError("--set changes a %s file: give one with -f", noun)
		}
		return new(S), nil
	}
	return parseAssetFile(file, sets, parse, warn)
}

// parseAssetFile reads a kind's YAML file with --set applied, its warnings written to warn.
func parseAssetFile[S any](file string, sets []string, parse func(string, []string) (*S, []string, error), warn io.Writer) (*S, error) {
	sp, warnings, err := parse(file, sets)
	if err != nil {
		return nil, specError(err)
	}
	for _, w := range warnings {
		fmt.Fprintf(warn, "warning: %s\n", w)
	}
	return sp, nil
}

// flagOverride is a create flag and the spec field it sets when given: flags win over the file.
type flagOverride struct {
	field *string
	flag  string
}

func applyFlags(overrides ...flagOverride) {
	for _, o := range overrides {
		if o.flag != "" {
			*o.field = o.flag
		}
	}
}

// checkAssetFields checks a create's name, type and version as far as the client can, and
// puts the type and version in their canonical form.
func checkAssetFields(kind asset.Kind, name string, typ, version *string, checkType func(string) (string, error)) error {
	if err := kind.CheckName(name); err != nil {
		return usageError("--name: %v", err)
	}
	t, err := checkType(*typ)
	if err != nil {
		return usageError("--type: %v", err)
	}
	*typ = t
	if *version != "" {
		v, err := kind.ParseVersion(*version)
		if err != nil {
			return usageError("--version: %v", err)
		}
		*version = v
	}
	return nil
}

// fileAssetColumns are the list columns of the kinds that register files (models, data).
var fileAssetColumns = []string{"NAME", "VERSION", "TYPE", "FILES", "SIZE", "SOURCE", "CREATED"}

// assetArchivedText is what show says of an archived version.
func assetArchivedText(archived bool) string {
	if archived {
		return "yes (still usable by its version; not @latest)"
	}
	return ""
}

// uploadAssetFiles uploads a local file or folder registered as an asset, every file as it
// is (no ignore rules: what was named is what is registered), and returns its manifest hash.
func (e *Env) uploadAssetFiles(ctx context.Context, c *api.Client, label, path string, isFile bool) (string, error) {
	u := e.newUploader(c)
	defer u.close()
	opts := snapshot.ScanOptions{IgnoreFiles: []string{}, DefaultIgnores: []string{}, Cache: u.cache}
	return u.tree(ctx, label, path, isFile, opts)
}
