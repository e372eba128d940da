package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line is read as az reads it before cobra parses it, once for every command
// (normalizeFlags, called by Run):
//   - a long flag may be shortened to any unambiguous prefix (--endpoint for --endpoint-name,
//     --f for --file, --out for --output); an ambiguous one is refused naming the candidates;
//   - az's flags that name an Azure scope (--resource-group/-g, --workspace-name/-w,
//     --subscription) and those that change nothing here are accepted and ignored with a note on
//     stderr, unless the command has a flag of that name itself;
//   - --set takes several key=value words, as az's does (--set a=1 b=2).

// azFlag is one of az's flags Hangar accepts without acting on it.
type azFlag struct {
	short     string // its one-letter form ("" for none)
	takesArg  bool
	note      string // why it changes nothing (printed on stderr)
	refuse    bool   // not ignored: refused with note as the reason
	valueHint string // what the value names, in a refusal
}

var azFlags = map[string]azFlag{
	"resource-group":         {short: "g", takesArg: true, note: "a Hangar workspace is the server at --workspace or $HANGAR_URL; Azure's resource group is ignored"},
	"workspace-name":         {short: "w", takesArg: true, note: "a Hangar workspace is the server at --workspace or $HANGAR_URL; Azure's workspace name is ignored"},
	"subscription":           {takesArg: true, note: "a Hangar workspace has no Azure subscription; ignored"},
	"only-show-errors":       {note: "ignored"},
	"verbose":                {note: "ignored"},
	"debug":                  {note: "ignored (hangar server --log-level debug logs the server's side)"},
	"web":                    {note: "ignored: `hangar studio` prints a link to the web studio"},
	"local":                  {note: "ignored: a Hangar endpoint is served by its workspace, which runs its replicas on the compute it names (local by default)"},
	"skip-script-validation": {note: "ignored: Hangar checks the scoring script when a replica starts"},
	"with-package":           {note: "ignored: Hangar serves the model from the workspace as it is, without packaging it into an image"},
	"package-model":          {note: "ignored: Hangar serves the model from the workspace as it is, without packaging it into an image"},
	"registry-name": {short: "r", takesArg: true, refuse: true, valueHint: "registry",
		note: "Azure ML registries are not part of a Hangar workspace: register the asset in the workspace (hangar model/component/environment create) and name it without --registry-name"},
}

// flagNormalization is normalizeFlags' result: the arguments cobra parses and the notes to print.
type flagNormalization struct {
	args  []string
	notes []string
}

// normalizeFlags rewrites args (without the program name) for cobra: prefixes to whole flag
// names, az's ignored flags removed, --set's extra words each given their own --set.
func normalizeFlags(root *cobra.Command, args []string) (flagNormalization, error) {
	if len(args) > 0 && (strings.HasPrefix(args[0], "__complete") || args[0] == "completion" || args[0] == "help") {
		return flagNormalization{args: args}, nil
	}
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		return flagNormalization{args: args}, nil // cobra says what is wrong
	}
	fs := commandFlags(cmd)
	n := flagNormalization{args: make([]string, 0, len(args))}
	noted := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			n.args = append(n.args, args[i:]...)
			return n, nil
		case strings.HasPrefix(a, "--"):
			skip, err := n.longFlag(cmd, fs, args[i:], noted)
			if err != nil {
				return n, err
			}
			i += skip
		case strings.HasPrefix(a, "-") && len(a) > 1:
			skip, err := n.shortFlag(fs, args[i:], noted)
			if err != nil {
				return n, err
			}
			i += skip
		default:
			n.args = append(n.args, a)
		}
	}
	return n, nil
}

// commandFlags is every flag cmd accepts: its own, those it inherits, help and version.
func commandFlags(cmd *cobra.Command) *pflag.FlagSet {
	cmd.InitDefaultHelpFlag()
	if cmd.Root() == cmd {
		cmd.InitDefaultVersionFlag()
	}
	fs := pflag.NewFlagSet(cmd.CommandPath(), pflag.ContinueOnError)
	fs.AddFlagSet(cmd.LocalFlags())
	fs.AddFlagSet(cmd.InheritedFlags())
	return fs
}

// longFlag handles args[0], a --flag, and returns how many more words it took.
func (n *flagNormalization) longFlag(cmd *cobra.Command, fs *pflag.FlagSet, args []string, noted map[string]bool) (int, error) {
	name, value, hasValue := strings.Cut(args[0][2:], "=")
	f, err := resolveLong(fs, name)
	if err != nil {
		return 0, usageError("%s: %v", cmd.CommandPath(), err)
	}
	if f == nil {
		if az, ok := azFlags[name]; ok {
			return n.azFlag("--"+name, az, value, hasValue, args, noted)
		}
		n.args = append(n.args, args[0]) // cobra refuses it
		return 0, nil
	}
	flag := "--" + f.Name
	if hasValue {
		n.args = append(n.args, flag+"="+value)
	} else {
		n.args = append(n.args, flag)
	}
	taken := 0
	if !hasValue && f.NoOptDefVal == "" && len(args) > 1 {
		n.args = append(n.args, args[1])
		taken = 1
	}
	if f.Name == "set" && (hasValue || taken == 1) {
		for _, w := range args[1+taken:] {
			if strings.HasPrefix(w, "-") || !strings.Contains(w, "=") {
				break
			}
			n.args = append(n.args, "--set", w)
			taken++
		}
	}
	return taken, nil
}

// shortFlag handles args[0], a -f or -fVALUE or -abc, and returns how many more words it took.
func (n *flagNormalization) shortFlag(fs *pflag.FlagSet, args []string, noted map[string]bool) (int, error) {
	short := args[0][1:2]
	if fs.ShorthandLookup(short) == nil {
		for name, az := range azFlags {
			if az.short == short && fs.Lookup(name) == nil {
				value, hasValue := args[0][2:], len(args[0]) > 2
				return n.azFlag("-"+short, az, strings.TrimPrefix(value, "="), hasValue, args, noted)
			}
		}
	}
	n.args = append(n.args, args[0])
	if f := fs.ShorthandLookup(short); f != nil && len(args[0]) == 2 && f.NoOptDefVal == "" && len(args) > 1 {
		n.args = append(n.args, args[1])
		return 1, nil
	}
	return 0, nil
}

// azFlag drops one of az's flags (and its value), with a note, or refuses it.
func (n *flagNormalization) azFlag(flag string, az azFlag, value string, hasValue bool, args []string, noted map[string]bool) (int, error) {
	taken := 0
	if az.takesArg && !hasValue && len(args) > 1 {
		value, taken = args[1], 1
	}
	if az.refuse {
		return taken, usageError("%s %s: %s", flag, value, az.note)
	}
	if !noted[flag] {
		noted[flag] = true
		n.notes = append(n.notes, fmt.Sprintf("note: %s is az's: %s", flag, az.note))
	}
	return taken, nil
}

// resolveLong finds the flag name stands for: its own name, else the only flag whose name
// starts with it. nil, nil when none does; an error naming the candidates when several do.
func resolveLong(fs *pflag.FlagSet, name string) (*pflag.Flag, error) {
	if name == "" {
		return nil, nil
	}
	if f := fs.Lookup(name); f != nil {
		return f, nil
	}
	if _, ok := azFlags[name]; ok {
		return nil, nil
	}
	var matches []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, name) && !f.Hidden {
			matches = append(matches, f)
		}
	})
	switch len(matches) {
	case 0:
		return nil, nil
	case 1:
		return matches[0], nil
	}
	names := make([]string, len(matches))
	for i, f := range matches {
		names[i] = "--" + f.Name
	}
	slices.Sort(names)
	return nil, fmt.Errorf("--%s is ambiguous: it may be %s", name, strings.Join(names, ", "))
}
