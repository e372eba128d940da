package spec

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// archive is a txtar-style file: a comment, then sections introduced by "-- name --".
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct{ name, data string }

func parseArchive(text string) archive {
	var a archive
	cur := &a.comment
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			a.files = append(a.files, archiveFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur += line
	}
	return a
}

func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.WriteString(f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func (a archive) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

// TestGolden runs each testdata/*.txtar scenario: job.yml (or env.yml) and the files
// beside it, --set overrides one per line in "args", and the expected result in
// want.json (the decoded spec and warnings) or want.err (the error text).
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(data))
			gotName, got := runScenario(t, a)
			if *update {
				var kept []archiveFile
				for _, f := range a.files {
					if f.name != "want.json" && f.name != "want.err" {
						kept = append(kept, f)
					}
				}
				a.files = append(kept, archiveFile{gotName, got})
				if err := os.WriteFile(path, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, ok := a.get(gotName)
			if !ok {
				t.Fatalf("got %s, but the scenario has no %s section:\n%s", gotName, gotName, got)
			}
			diff(t, got, want)
		})
	}
}

// runScenario parses the scenario and returns the name and content of its result section.
func runScenario(t *testing.T, a archive) (string, string) {
	files := map[string]string{}
	for _, f := range a.files {
		if f.name != "args" && !strings.HasPrefix(f.name, "want.") {
			files[f.name] = f.data
		}
	}
	dir := writeTree(t, files)
	var sets []string
	if args, ok := a.get("args"); ok {
		sets = strings.Split(strings.TrimRight(args, "\n"), "\n")
	}
	var result any
	var warnings []string
	var err error
	if yml, ok := a.get("job.yml"); ok {
		result, warnings, err = ParseJob("job.yml", []byte(yml), dir, sets)
	} else {
		yml, _ := a.get("env.yml")
		result, warnings, err = ParseEnvironment("env.yml", []byte(yml), dir, sets)
	}
	if err != nil {
		return "want.err", strings.ReplaceAll(err.Error(), dir, "$DIR") + "\n"
	}
	out, jerr := json.MarshalIndent(map[string]any{"result": result, "warnings": warnings}, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return "want.json", strings.ReplaceAll(string(out), dir, "$DIR") + "\n"
}
