package cli

import (
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/hangar-ml/hangar/internal/asset"
)

// What model create and data create share: the kinds that register files from a path.

// fileAssetFlags are the create flags both kinds have.
type fileAssetFlags struct {
	file, name, version, path, typ, description string
	sets                                        []string
}

// add registers the flags; noun names the kind in their help ("model", "data asset").
func (f *fileAssetFlags) add(fl *pflag.FlagSet, yamlNoun, noun, pathHelp, typeHelp string) {
	fl.StringVarP(&f.file, "file", "f", "", yamlNoun+" YAML file")
	fl.StringVarP(&f.name, "name", "n", "", noun+" name (default: from the file)")
	fl.StringVarP(&f.version, "version", "v", "", "version, a string such as 3 or 0.0.1 (default: the next integer)")
	fl.StringVarP(&f.path, "path", "p", "", pathHelp)
	fl.StringVarP(&f.typ, "type", "t", "", typeHelp)
	fl.StringVarP(&f.description, "description", "d", "", "description")
	fl.StringArrayVar(&f.sets, "set", nil, "override a field of the file: --set key.path=value (repeatable)")
}

// assetFields are the fields of a kind's spec the shared flags set.
type assetFields struct{ name, version, typ, description, path *string }

// fileAssetKind is how one kind builds what to register from its file and the flags.
type fileAssetKind[S any] struct {
	kind      asset.Kind
	noun      string // as readAssetFile names the file: "model", "data"
	parse     func(string, []string) (*S, []string, error)
	fields    func(*S) assetFields
	remote    func(path string) bool // a path that is not a local file or folder
	checkType func(string) (string, error)
	// noName and noPath are the usage errors for a spec without a name or a path.
	noName, noPath string
}

// spec builds what to register from the file and the flags (extra: the kind's own flags),
// checked as far as the client can.
func (k fileAssetKind[S]) spec(f fileAssetFlags, warn io.Writer, extra func(*S) []flagOverride) (*S, error) {
	sp, err := readAssetFile(f.file, f.sets, k.noun, k.parse, warn)
	if err != nil {
		return nil, err
	}
	x := k.fields(sp)
	applyFlags(append([]flagOverride{{x.name, f.name}, {x.version, f.version}, {x.typ, f.typ},
		{x.description, f.description}}, extra(sp)...)...)
	if f.path != "" {
		*x.path = f.path
		if !k.remote(f.path) {
			abs, err := filepath.Abs(f.path)
			if err != nil {
				return nil, err
			}
			*x.path = abs
		}
	}
	switch {
	case *x.name == "":
		return nil, usageError("%s", k.noName)
	case *x.path == "":
		return nil, usageError("%s", k.noPath)
	}
	if err := checkAssetFields(k.kind, *x.name, x.typ, x.version, k.checkType); err != nil {
		return nil, err
	}
	return sp, nil
}
