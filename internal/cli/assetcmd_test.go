package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/model"
)

// findCmd returns the command at path under root ("model list"), failing the test without one.
func findCmd(t *testing.T, root *cobra.Command, path string) *cobra.Command {
	t.Helper()
	c, rest, err := root.Find(strings.Fields(path))
	if err != nil || len(rest) > 0 || c.CommandPath() != "hangar "+path {
		t.Fatalf("no command %q: %v", path, err)
	}
	return c
}

// The shared list, show, archive and restore builder says for each kind what that kind's own
// commands said before they were folded into one (the help is what users read).
func TestAssetCommandsHelp(t *testing.T) {
	tests := []struct {
		path, short, example string
		long                 string
		flags                map[string]string
	}{
		{path: "model list", short: "List models (the latest version of each), or the versions of one",
			example: "  hangar model list\n  hangar model list --name mnist --include-archived -o json",
			flags:   map[string]string{"name": "list this model's versions", "include-archived": "include archived versions"}},
		{path: "data list", short: "List data assets (the latest version of each), or the versions of one",
			example: "  hangar data list\n  hangar data list --name iris --include-archived -o json",
			flags:   map[string]string{"name": "list this data asset's versions"}},
		{path: "component show", short: "Show a component version (default: the latest)",
			example: "  hangar component show train\n  hangar component show train:2 -o yaml\n  hangar component show --name train --version 2",
			flags:   map[string]string{"name": "component name (or NAME[:VERSION|@latest] as the argument)", "label": "label: latest"}},
		{path: "model archive", short: "Archive a model version, or every version of a model",
			example: "  hangar model archive --name mnist --version 1\n  hangar model archive mnist",
			long: "An archived version is left out of model list and of @latest, and still resolves when named by\n" +
				"its version (deployments that use it keep working). Without --version every version is archived.",
			flags: map[string]string{"name": "model name (or give it as the first argument)", "version": "one version (default: every version)"}},
		{path: "data restore", short: "Restore an archived data asset version, or every version of one",
			example: "  hangar data restore --name iris --version 1\n  hangar data restore iris",
			long:    "Undo data archive: the version is listed again and counts for @latest.",
			flags:   map[string]string{"name": "data asset name (or give it as the first argument)"}},
		{path: "component archive", short: "Archive a component version, or every version of a component",
			long: "An archived version is left out of component list and of @latest, and still resolves when named\n" +
				"by its version (pipelines that name it keep working). Without --version every version is archived."},
	}
	root := NewRoot(Deps{})
	for _, tt := range tests {
		c := findCmd(t, root, tt.path)
		if c.Short != tt.short {
			t.Errorf("%s: short %q, want %q", tt.path, c.Short, tt.short)
		}
		if tt.example != "" && c.Example != tt.example {
			t.Errorf("%s: example %q, want %q", tt.path, c.Example, tt.example)
		}
		if tt.long != "" && c.Long != tt.long {
			t.Errorf("%s: long %q, want %q", tt.path, c.Long, tt.long)
		}
		for name, usage := range tt.flags {
			if f := c.Flags().Lookup(name); f == nil || f.Usage != usage {
				t.Errorf("%s --%s: %+v, want usage %q", tt.path, name, f, usage)
			}
		}
	}
}

// The list table: each kind's columns, ARCHIVED only when archived versions are asked for, and
// "-" for the files of data read in place.
func TestAssetListTable(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	var buf bytes.Buffer
	if err := modelCommands().table(&buf, []model.Version{{Name: "mnist", Version: "2", Type: "custom_model", Files: 3,
		Size: 2000, Source: "local", CreatedAt: at}}, false); err != nil {
		t.Fatal(err)
	}
	want := "NAME   VERSION  TYPE          FILES  SIZE    SOURCE  CREATED\n" +
		"mnist  2        custom_model  3      2.0 kB  local   2026-01-02 03:04:05\n"
	if buf.String() != want {
		t.Errorf("model list =\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := dataCommands().table(&buf, []dataset.Version{{Name: "iris", Version: "1", Type: "uri_file",
		Source: "https://x/y.csv", CreatedAt: at, Archived: true}}, true); err != nil {
		t.Fatal(err)
	}
	want = "NAME  VERSION  TYPE      FILES  SIZE  SOURCE           CREATED              ARCHIVED\n" +
		"iris  1        uri_file  -      -     https://x/y.csv  2026-01-02 03:04:05  true\n"
	if buf.String() != want {
		t.Errorf("data list --include-archived =\n%s\nwant\n%s", buf.String(), want)
	}
}
