package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/sizes"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// Isolated sizes (issue 17): the catalog says which sizes are isolated; two runs that would
// share a node of such a size land on two nodes (a third waits for a node of its own), while
// the same pair on a cluster of a shared size packs onto one node.
func TestIsolatedSizeGivesEachRunItsOwnNode(t *testing.T) {
	w := newWS(t)
	dir := t.TempDir()
	release := filepath.Join(runsSee(t), "release")
	w.ok("compute", "add-size", "--name", "whole-box", "--cores", "2", "--memory", "2Gi", "--family", "onprem", "--isolated")
	w.ok("compute", "add-size", "--name", "shared-box", "--cores", "2", "--memory", "2Gi", "--family", "onprem")
	var listed []sizes.Size
	if err := json.Unmarshal([]byte(w.ok("compute", "list-sizes", "-o", "json").stdout), &listed); err != nil {
		t.Fatal(err)
	}
	isolated := map[string]bool{}
	for _, z := range listed {
		isolated[z.Name] = z.Isolated
	}
	if !isolated["whole-box"] || isolated["shared-box"] || isolated["local-quarter"] {
		t.Errorf("list-sizes -o json isolated: %v", isolated)
	}
	table := w.ok("compute", "list-sizes").stdout
	if !strings.Contains(table, "ISOLATED") || !tableRowHas(table, "whole-box", "yes") || !tableRowHas(table, "shared-box", "no") {
		t.Errorf("list-sizes table:\n%s", table)
	}

	jobYAML := "command: echo started; while [ ! -f " + release + " ]; do sleep 0.2; done; echo done\n" +
		"resources: {properties: {cores: 1}}\n"
	writeFiles(t, dir, map[string]string{
		"iso.yml":        "name: iso\ntype: amlcompute\nsize: whole-box\nmax_instances: 2\nidle_time_before_scale_down: 60\n",
		"shared.yml":     "name: shared\ntype: amlcompute\nsize: shared-box\nmax_instances: 2\nidle_time_before_scale_down: 60\n",
		"iso-job.yml":    jobYAML + "compute: iso\n",
		"shared-job.yml": jobYAML + "compute: shared\n",
	})
	w.ok("compute", "create", "-f", filepath.Join(dir, "iso.yml"))
	w.ok("compute", "create", "-f", filepath.Join(dir, "shared.yml"))
	iso := []string{w.create(filepath.Join(dir, "iso-job.yml")), w.create(filepath.Join(dir, "iso-job.yml"))}
	shared := []string{w.create(filepath.Join(dir, "shared-job.yml")), w.create(filepath.Join(dir, "shared-job.yml"))}
	third := w.create(filepath.Join(dir, "iso-job.yml"))
	testwait.Within(t, 3*time.Minute, "the four runs to run", func() bool {
		for _, n := range append(slices.Clone(iso), shared...) {
			if !logHas(w, n, "started") {
				return false
			}
		}
		return true
	})
	testwait.Within(t, time.Minute, "every node to report its runs", func() bool {
		return runsOnNodes(w, "iso", iso) != "" && runsOnNodes(w, "shared", shared) != ""
	})
	if got := runsOnNodes(w, "iso", iso); got != "1 1" {
		t.Errorf("isolated runs per node of cluster iso: %s, want one on each of two nodes", got)
	}
	if got := runsOnNodes(w, "shared", shared); got != "2" {
		t.Errorf("shared runs per node of cluster shared: %s, want both on one node", got)
	}
	want := "waiting for a node of its own (size whole-box is isolated)"
	testwait.Within(t, 30*time.Second, "the third isolated run to say why it waits", func() bool {
		d := w.show(third)
		return d.Status == job.Queued && strings.Contains(d.StatusReason, want)
	})
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range append(append(slices.Clone(iso), shared...), third) {
		if d := w.waitStatus(n, 2*time.Minute, job.Completed, job.Failed, job.Canceled); d.Status != job.Completed {
			t.Errorf("%s: %s (%s)", n, d.Status, d.StatusReason)
		}
	}
}

// runsOnNodes counts, per node of the cluster holding any of runs, how many of runs its agent
// reports ("1 1": one on each of two nodes); "" until every run is reported somewhere.
func runsOnNodes(w *ws, cluster string, runs []string) string {
	w.t.Helper()
	var counts []string
	seen := 0
	for _, n := range w.cluster(cluster).Nodes {
		k := 0
		for _, r := range n.Runs {
			for _, want := range runs {
				if r.RunID == want && r.Alive {
					k++
				}
			}
		}
		if k > 0 {
			counts = append(counts, string(rune('0'+k)))
			seen += k
		}
	}
	if seen != len(runs) {
		return ""
	}
	return strings.Join(counts, " ")
}

// tableRowHas reports whether the table row that starts with name holds the cell want.
func tableRowHas(table, name, want string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == name {
			for _, c := range f {
				if c == want {
					return true
				}
			}
		}
	}
	return false
}
