package slurm_test

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/backend/backendtest"
	slurmbackend "github.com/hangar-ml/hangar/internal/backend/slurm"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/slurm"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// The Slurm backend passes the conformance suite on the test cluster of scripts/setup/slurm.sh
// (two nodes on this machine): one batch job per run, the supervisor inside it.
func TestConformance(t *testing.T) {
	conf := backendtest.SlurmConf(t)
	backendtest.Run(t, func(t *testing.T, ws *backendtest.Workspace) *backendtest.Engine {
		target := backendtest.Target(t, compute.Spec{Name: "hpc", Type: compute.TypeSlurm,
			Slurm: &compute.SlurmSpec{Partition: "debug", SlurmConf: conf}})
		exe, root := backendtest.Binary(t), t.TempDir()
		return &backendtest.Engine{
			Target: target,
			New: func() backend.Backend {
				return &slurmbackend.Backend{Root: root, Exe: exe, ServerURL: func() string { return ws.URL },
					BlobDir: ws.Blobs.Dir(), Blobs: ws.Blobs, Hide: []string{root}, Targets: backendtest.Resolver(target),
					Log: slog.New(slog.DiscardHandler), Refresh: 200 * time.Millisecond}
			},
			// A second sbatch would be a second job, pending or running: count the run's jobs.
			Supervisors: func(runID string) int { return len(activeJobs(t, conf, runID)) },
			Cleanup: func(runID, marker string) {
				if ids := activeJobs(t, conf, runID); len(ids) > 0 {
					_ = command(conf, append([]string{"scancel"}, ids...)...).Run()
				}
				for _, pid := range backendtest.LocalSupervisors(runID) {
					_ = exec.Command("kill", "-9", fmt.Sprint(pid)).Run()
				}
			},
		}
	})
}

// activeJobs lists the run's Slurm jobs that have not ended.
func activeJobs(t testing.TB, conf, runID string) []string {
	out, err := command(conf, "squeue", "--noheader", "--states=PENDING,CONFIGURING,RUNNING,COMPLETING,SUSPENDED",
		"--name="+slurm.JobName(runID), "--format=%i").Output()
	if err != nil {
		t.Errorf("squeue: %v", err)
	}
	return strings.Fields(string(out))
}

func command(conf string, argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	return cmd
}
