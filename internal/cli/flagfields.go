package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// az's creates take a resource's fields as flags (`compute create -n cpu --type amlcompute
// --max-instances 4`) instead of, or over, a file. Each such flag is a field of the resource's
// YAML: its value becomes a --set of that field, applied before the command's own --set, so
// that the resource is decoded and checked exactly as a file with those fields would be.

// commandLine names the resource a create made of flags alone, in its errors.
const commandLine = "command line"

// specFromFileOrName reads a resource's file with parseFile, or, without a file, makes one of
// --name and the sets alone with parse (az's create from flags); a --name given names it either
// way, through rename.
func specFromFileOrName[T any](env *Env, file, name string, sets []string,
	parse func(file string, data []byte, baseDir string, sets []string) (*T, []string, error),
	parseFile func(file string, sets []string) (*T, []string, error), rename func(*T, string)) (*T, error) {
	var v *T
	var warnings []string
	var err error
	if file == "" {
		if name == "" {
			return nil, usageError("give --file (-f), or --name")
		}
		v, warnings, err = parse(commandLine, nil, ".", append([]string{"name=" + strconv.Quote(name)}, sets...))
	} else {
		v, warnings, err = parseFile(file, sets)
	}
	if err != nil {
		return nil, specError(err)
	}
	env.warn(warnings)
	if name != "" {
		rename(v, name)
	}
	return v, nil
}

// fileError puts the file's name before an error of what was read from it (nil stays nil).
func fileError(file string, err error) error {
	if file == "" || err == nil {
		return err
	}
	return fmt.Errorf("%s: %w", file, err)
}

// flagField is one flag that sets one field.
type flagField struct {
	flag, short string
	field       string // the YAML field path, "ssh_settings.admin_username"
	help        string
	kind        flagKind
	// list: the value is a comma-separated list whose items become [{item: v}, ...].
	listItemKey string
}

type flagKind int

const (
	textFlag flagKind = iota
	intFlag
	boolFlag
)

// flagFields holds the registered fields' values.
type flagFields struct {
	fields []flagField
	values map[string]*string
	cmd    *cobra.Command
}

// addFlagFields registers fields' flags on cmd.
func addFlagFields(cmd *cobra.Command, fields []flagField) *flagFields {
	ff := &flagFields{fields: fields, values: map[string]*string{}, cmd: cmd}
	for _, f := range fields {
		v := new(string)
		ff.values[f.flag] = v
		cmd.Flags().StringVarP(v, f.flag, f.short, "", f.help)
	}
	return ff
}

// given reports whether any of the fields' flags was given.
func (ff *flagFields) given() bool {
	for _, f := range ff.fields {
		if ff.cmd.Flags().Changed(f.flag) {
			return true
		}
	}
	return false
}

// sets are the given flags as --set overrides, in the order the fields are listed.
func (ff *flagFields) sets() ([]string, error) {
	var out []string
	for _, f := range ff.fields {
		if !ff.cmd.Flags().Changed(f.flag) {
			continue
		}
		v, err := f.setValue(*ff.values[f.flag])
		if err != nil {
			return nil, err
		}
		out = append(out, f.field+"="+v)
	}
	return out, nil
}

// setValue is the --set value of one flag's text: checked for its kind, a string quoted so
// that it stays a string whatever it looks like.
func (f flagField) setValue(v string) (string, error) {
	switch {
	case f.listItemKey != "":
		var items []string
		for _, it := range strings.Split(v, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, "{"+f.listItemKey+": "+strconv.Quote(it)+"}")
			}
		}
		return "[" + strings.Join(items, ", ") + "]", nil
	case f.kind == intFlag:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return "", usageError("--%s: expected an integer, got %q", f.flag, v)
		}
		return v, nil
	case f.kind == boolFlag:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", usageError("--%s: expected true or false, got %q", f.flag, v)
		}
		return strconv.FormatBool(b), nil
	}
	return strconv.Quote(v), nil
}
