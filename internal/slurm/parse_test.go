package slurm

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// TestParseGolden runs each testdata/*.txtar: the output of a real Slurm command (section
// "input"), the parser named in section "parser" (sbatch, squeue, sacct, scontrol, sinfo),
// and what it must return (want.json: the parsed value and, for jobs, Judge's
// verdict) or its error (want.err). go test -run TestParseGolden -update rewrites the wants.
func TestParseGolden(t *testing.T) {
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
			name, got := parse(t, a.get("parser"), a.get("input"))
			if *update {
				a.set(name, got)
				if err := os.WriteFile(path, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := a.get(name)
			if want == "" {
				t.Fatalf("got %s but the scenario has none:\n%s", name, got)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s (-want +got):\n%s", name, d)
			}
		})
	}
}

// parse runs the named parser and returns the section name and content of its result.
func parse(t *testing.T, parser, input string) (string, string) {
	t.Helper()
	var v any
	var err error
	switch strings.TrimSpace(parser) {
	case "sbatch":
		v, err = ParseSbatch(input)
	case "squeue":
		v, err = judged(ParseSqueue(input))
	case "sacct":
		v, err = judged(ParseSacct(input))
	case "scontrol":
		v, err = judged(ParseScontrolJobs(input))
	case "sinfo":
		v, err = ParseSinfo(input)
	default:
		t.Fatalf("unknown parser %q", parser)
	}
	if err != nil {
		return "want.err", err.Error() + "\n"
	}
	b, jerr := json.MarshalIndent(v, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return "want.json", string(b) + "\n"
}

// judgedJob is a parsed job with Judge's verdict, so the golden files show both.
type judgedJob struct {
	Job     Job     `json:"job"`
	Verdict Verdict `json:"verdict"`
}

func judged(jobs []Job, err error) ([]judgedJob, error) {
	if err != nil {
		return nil, err
	}
	var out []judgedJob
	for _, j := range jobs {
		out = append(out, judgedJob{j, Judge(j)})
	}
	return out, nil
}

// archive is a txtar-like file: a comment, then "-- name --" sections.
type archive struct {
	comment  string
	sections []section
}

type section struct{ name, data string }

func parseArchive(s string) archive {
	var a archive
	cur := -1
	for _, line := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimRight(line, "\n"), " --") {
			name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimRight(line, "\n"), "-- "), " --")
			a.sections = append(a.sections, section{name: name})
			cur = len(a.sections) - 1
			continue
		}
		if cur < 0 {
			a.comment += line
		} else {
			a.sections[cur].data += line
		}
	}
	return a
}

func (a archive) get(name string) string {
	for _, s := range a.sections {
		if s.name == name {
			return s.data
		}
	}
	return ""
}

// set replaces the want sections with one named name.
func (a *archive) set(name, data string) {
	var kept []section
	for _, s := range a.sections {
		if !strings.HasPrefix(s.name, "want.") {
			kept = append(kept, s)
		}
	}
	a.sections = append(kept, section{name, data})
}

func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, s := range a.sections {
		b.WriteString("-- " + s.name + " --\n" + s.data)
	}
	return b.String()
}
