package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seeds adds the inputs of the golden scenarios for a parser to a fuzz corpus.
func seeds(f *testing.F, parser string) {
	paths, _ := filepath.Glob("testdata/*.txtar")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		a := parseArchive(string(data))
		if strings.TrimSpace(a.get("parser")) == parser {
			f.Add(a.get("input"))
		}
	}
}

// Parsed jobs always have a numeric id and a Slurm state word, and Judge puts every one in exactly
// one of pending-alive, alive or final.
func checkJobs(t *testing.T, jobs []Job) {
	for _, j := range jobs {
		if !jobIDRE.MatchString(j.ID) || !stateRE.MatchString(j.State) {
			t.Fatalf("parsed a job with id %q state %q", j.ID, j.State)
		}
		v := Judge(j)
		if v.Alive == v.Final || (v.Pending && !v.Alive) || (v.Final && v.State == "") || (v.Killed && !v.Final) {
			t.Fatalf("Judge(%+v) = %+v", j, v)
		}
		if v.Final && !v.State.Terminal() {
			t.Fatalf("Judge(%+v): final state %s is not terminal", j, v.State)
		}
	}
}

func FuzzParseSqueue(f *testing.F) {
	seeds(f, "squeue")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseSqueue(in)
		if err != nil {
			return
		}
		checkJobs(t, jobs)
		// Writing the jobs back in SqueueFormat reads the same jobs.
		var b strings.Builder
		for _, j := range jobs {
			b.WriteString(j.ID + "|" + j.State + "|" + j.Reason + "|" + j.NodeList + "|" + j.Name + "\n")
		}
		again, err := ParseSqueue(b.String())
		if err != nil || len(again) != len(jobs) {
			t.Fatalf("reparse of %q: %v, %d jobs, want %d", b.String(), err, len(again), len(jobs))
		}
	})
}

func FuzzParseSacct(f *testing.F) {
	seeds(f, "sacct")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseSacct(in)
		if err != nil {
			return
		}
		checkJobs(t, jobs)
		for _, j := range jobs {
			if j.Exit != nil && (j.Exit.Code < 0 || j.Exit.Code > 255 || j.Exit.Signal < 0 || j.Exit.Signal > 255) {
				t.Fatalf("exit %+v out of range", *j.Exit)
			}
		}
	})
}

func FuzzParseScontrolJobs(f *testing.F) {
	seeds(f, "scontrol")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseScontrolJobs(in)
		if err != nil {
			return
		}
		checkJobs(t, jobs)
	})
}

func FuzzParseSinfo(f *testing.F) {
	seeds(f, "sinfo")
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := ParseSinfo(in)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, n := range nodes {
			if n.Name == "" || seen[n.Name] || n.CPUs < 0 || n.MemoryMB < 0 || n.GPUs() < 0 {
				t.Fatalf("node %+v (seen before: %v)", n, seen[n.Name])
			}
			seen[n.Name] = true
		}
	})
}

func FuzzParseSbatch(f *testing.F) {
	seeds(f, "sbatch")
	f.Add("12")
	f.Fuzz(func(t *testing.T, in string) {
		id, err := ParseSbatch(in)
		if err == nil && !jobIDRE.MatchString(id) {
			t.Fatalf("ParseSbatch(%q) = %q", in, id)
		}
	})
}
