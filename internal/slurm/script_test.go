package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
)

func submission(mod func(*Submission)) Submission {
	s := Submission{RunID: "run1", Dir: "/shared/hangar/runs/run1", Hangar: "/shared/hangar/.hangar/bin/hangar-0123",
		Config: "/shared/hangar/runs/run1/supervisor.json"}
	if mod != nil {
		mod(&s)
	}
	return s
}

func TestArgs(t *testing.T) {
	base := []string{"--parsable", "--job-name=hangar-run1", "--chdir=/shared/hangar/runs/run1",
		"--output=/shared/hangar/runs/run1/system_logs/slurm-%j.txt", "--no-requeue", "--nodes=1", "--ntasks-per-node=1"}
	script := "/shared/hangar/runs/run1/job.sh"
	full := compute.SlurmSpec{
		Partition: "gpu", Account: "ml", QOS: "normal", MaxNodes: 4, TimeLimitSeconds: 3600,
		SbatchArgs:  []string{"--constraint=a100"},
		SizeMap:     map[string]compute.SlurmSize{"gpu-1": {CPUsPerTask: 8, Mem: "64G", Gres: "gpu:1"}, "cpu": {CPUsPerTask: 2}},
		PriorityMap: map[string]compute.SlurmPriority{"low": {Nice: 1000}, "high": {QOS: "urgent"}},
	}
	cases := []struct {
		name string
		s    Submission
		want []string
		err  string
	}{
		{name: "defaults", s: submission(nil), want: append(append([]string{}, base...), script)},
		{name: "everything", s: submission(func(s *Submission) {
			s.Target = full
			s.Job.Resources = job.Resources{InstanceCount: 2, InstanceType: "gpu-1"}
			s.Job.QueueSettings.Priority = "high"
			s.Job.Limits.TimeoutSeconds = 90
		}), want: []string{"--parsable", "--job-name=hangar-run1", "--chdir=/shared/hangar/runs/run1",
			"--output=/shared/hangar/runs/run1/system_logs/slurm-%j.txt", "--no-requeue", "--nodes=2", "--ntasks-per-node=1",
			"--partition=gpu", "--account=ml", "--qos=urgent", "--time=3", "--cpus-per-task=8", "--mem=64G", "--gres=gpu:1",
			"--constraint=a100", script}},
		{name: "target time limit and nice", s: submission(func(s *Submission) {
			s.Target = full
			s.Job.QueueSettings.Priority = "Low"
		}), want: []string{"--parsable", "--job-name=hangar-run1", "--chdir=/shared/hangar/runs/run1",
			"--output=/shared/hangar/runs/run1/system_logs/slurm-%j.txt", "--no-requeue", "--nodes=1", "--ntasks-per-node=1",
			"--nice=1000", "--partition=gpu", "--account=ml", "--qos=normal", "--time=60", "--constraint=a100", script}},
		{name: "unknown size", s: submission(func(s *Submission) {
			s.Target = full
			s.Job.Resources.InstanceType = "huge"
		}), err: "resources.instance_type: huge is not in the target's size_map (cpu, gpu-1)"},
		{name: "size without a size map is left to the partition", s: submission(func(s *Submission) {
			s.Job.Resources.InstanceType = "huge"
		}), want: append(append([]string{}, base...), script)},
		{name: "too many nodes", s: submission(func(s *Submission) {
			s.Target = full
			s.Job.Resources.InstanceCount = 5
		}), err: "resources.instance_count: the job asks for 5 nodes, the target allows 4 (max_nodes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.s.Args()
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("args (-want +got):\n%s", d)
			}
		})
	}
}

// TestScriptGolden compares the generated batch scripts with testdata/script_*.sh (-update
// rewrites them): one node (the supervisor only) and two nodes (the srun check first).
func TestScriptGolden(t *testing.T) {
	for name, s := range map[string]Submission{
		"single": submission(nil),
		"two_nodes": submission(func(s *Submission) {
			s.Job.Resources.InstanceCount = 2
			s.Dir = "/shared/my runs/run1" // a path that needs quoting
		}),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "script_"+name+".sh")
			got := s.Script()
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("script (-want +got):\n%s", d)
			}
		})
	}
}

func TestShq(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b-c_d.e": "/a/b-c_d.e", "": "''", "a b": "'a b'", "it's": `'it'"'"'s'`, "$HOME": "'$HOME'",
	} {
		if got := shq(in); got != want {
			t.Errorf("shq(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestGPUs(t *testing.T) {
	for gres, want := range map[string]int{"": 0, "gpu:2": 2, "gpu:a100:4(S:0-1)": 4, "gpu:a100:2,gpu:v100:1": 3, "mps:100": 0, "gpu:x": 0} {
		if got := (Node{Gres: gres}).GPUs(); got != want {
			t.Errorf("GPUs(%q) = %d, want %d", gres, got, want)
		}
	}
}

func TestJudgePendingGloss(t *testing.T) {
	v := Judge(Job{ID: "7", State: "PENDING", Reason: "QOSMaxJobsPerUserLimit"})
	if !v.Pending || !strings.Contains(v.Reason, "QOSMaxJobsPerUserLimit") || !strings.Contains(v.Reason, "per user") {
		t.Errorf("%+v", v)
	}
	v = Judge(Job{ID: "7", State: "TIMEOUT", Exit: &Exit{Signal: 15}})
	if !v.Final || !v.Killed || v.State != job.Canceled || *v.ExitCode != 143 || !strings.HasPrefix(v.Reason, "TIMEOUT") {
		t.Errorf("%+v", v)
	}
	v = Judge(Job{ID: "7", State: "SOMETHING_NEW"})
	if !v.Alive || v.Final {
		t.Errorf("unknown state: %+v", v)
	}
}
