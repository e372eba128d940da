package slurm

import (
	"strings"
	"testing"
)

// sbatch exports its environment into the job, where Slurm keeps it with the job: every Slurm
// command line leaves the server's own credentials out.
func TestLineLeavesTheServersCredentialsOut(t *testing.T) {
	l := (&target{}).line("sbatch", "--parsable", "job.sh")
	for _, v := range []string{"HANGAR_TOKEN", "HANGAR_URL", "HANGAR_DATABASE_URL", "HANGAR_JOIN_TOKEN"} {
		if !strings.Contains(l, " -u "+v+" ") {
			t.Errorf("%s does not unset %s", l, v)
		}
	}
	if !strings.HasPrefix(l, "env ") || !strings.HasSuffix(l, " sbatch --parsable job.sh") {
		t.Errorf("line = %s", l)
	}
}
