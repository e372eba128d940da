package spec

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// decodeScenario decodes a scenario's file: a is the archive, dir the folder its files
// were written to, sets its --set lines.
type decodeScenario func(t *testing.T, a archive, dir string, sets []string) (result any, warnings []string, err error)

// goldenScenarios is the one runner of the txtar scenarios (testdata/*.txtar,
// testdata/compute, testdata/data, testdata/model): each archive matching pattern has its
// files written to a folder (all sections but "args" and "want.*"), its --set overrides one
// per line in "args", and is decoded by decode; the result and warnings must equal its
// want.json, or the error its want.err, with the folder written $DIR (and, with parent, its
// parent $PARENT). -update rewrites the want sections.
func goldenScenarios(t *testing.T, pattern string, parent bool, decode decodeScenario) {
	t.Helper()
	paths, err := filepath.Glob(pattern)
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
			gotName, got := runScenario(t, a, parent, decode)
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

// runScenario decodes the scenario and returns the name and content of its result section.
func runScenario(t *testing.T, a archive, parent bool, decode decodeScenario) (string, string) {
	t.Helper()
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
	result, warnings, err := decode(t, a, dir, sets)
	clean := strings.NewReplacer(dir, "$DIR").Replace
	if parent {
		clean = strings.NewReplacer(dir, "$DIR", filepath.Dir(dir), "$PARENT").Replace
	}
	if err != nil {
		return "want.err", clean(err.Error()) + "\n"
	}
	out, jerr := json.MarshalIndent(map[string]any{"result": result, "warnings": warnings}, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return "want.json", clean(string(out)) + "\n"
}

// TestGolden runs each testdata/*.txtar scenario: job.yml (or env.yml) and the files
// beside it, --set overrides one per line in "args", and the expected result in
// want.json (the decoded spec and warnings) or want.err (the error text).
func TestGolden(t *testing.T) {
	goldenScenarios(t, "testdata/*.txtar", false, func(t *testing.T, a archive, dir string, sets []string) (any, []string, error) {
		if yml, ok := a.get("job.yml"); ok {
			return ParseJob("job.yml", []byte(yml), dir, sets)
		}
		yml, _ := a.get("env.yml")
		return ParseEnvironment("env.yml", []byte(yml), dir, sets)
	})
}

// exampleTree is a folder of Azure's example files (copied unchanged under testdata) decoded
// into one golden JSON file.
type exampleTree struct {
	dir, golden string   // the folder under testdata, and the golden file
	exts        []string // the endings of the file names read
	// decode reads one file; skip leaves it out (a conda file). An error fails the test, or
	// with keepErrors is recorded in the golden file (each line of it).
	decode     func(t *testing.T, root, path string, data []byte) (result any, warnings []string, skip bool, err error)
	keepErrors bool
	min        int // the fewest files that must decode
}

// goldenExamples is the one runner of the example trees (testdata/batch, testdata/online,
// testdata/pipelines): every file's result and warnings by its path, the folder written
// $DIR, equal the golden file; -update rewrites it.
func goldenExamples(t *testing.T, x exampleTree) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", x.dir))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	decoded := 0
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !slices.ContainsFunc(x.exts, func(ext string) bool { return strings.HasSuffix(p, ext) }) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		result, warnings, skip, err := x.decode(t, root, p, data)
		switch {
		case skip:
			return nil
		case err != nil && x.keepErrors:
			got[rel] = map[string]any{"errors": strings.Split(err.Error(), "\n")}
			return nil
		case err != nil:
			t.Errorf("%s does not decode:\n%v", rel, err)
			return nil
		}
		decoded++
		got[rel] = map[string]any{"result": result, "warnings": warnings}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if decoded < x.min {
		t.Fatalf("only %d example files decoded", decoded)
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(out), root, "$DIR") + "\n"
	if *update {
		if err := os.WriteFile(x.golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(x.golden)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, text, string(want))
}
