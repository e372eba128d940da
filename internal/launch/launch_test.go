package launch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

func TestPyTorchTwoNodesTwoProcesses(t *testing.T) {
	top := Topology{Nodes: []string{"10.0.0.1", "10.0.0.2"}, NodeRank: 1, MasterPort: 29500, GPUs: []string{"0", "1", "2", "3"}}
	p, err := Make(&job.Distribution{Type: "pytorch", ProcessCountPerInstance: 2}, 2, top)
	if err != nil {
		t.Fatal(err)
	}
	if p.WorldSize != 4 || p.PerNode != 2 || len(p.Processes) != 2 {
		t.Fatalf("plan %+v", p)
	}
	got := p.Processes[1]
	want := map[string]string{
		"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "WORLD_SIZE": "4", "RANK": "3", "LOCAL_RANK": "1",
		"NODE_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1", "CUDA_VISIBLE_DEVICES": "2,3",
		"AZ_BATCH_MASTER_NODE": "10.0.0.1:29500", "AZ_BATCHAI_MPI_MASTER_NODE": "10.0.0.1",
	}
	if diff := cmp.Diff(want, got.Env); diff != "" {
		t.Errorf("rank 3 env (-want +got):\n%s", diff)
	}
	if got.Rank != 3 || got.Log != "std_log_process_3.txt" {
		t.Errorf("rank %d log %s", got.Rank, got.Log)
	}
}

func TestDefaultProcessesPerNodeIsGPUs(t *testing.T) {
	tests := []struct {
		gpus []string
		want int
		cuda []string
	}{
		{nil, 1, []string{""}},
		{[]string{"0"}, 1, []string{"0"}},
		{[]string{"0", "1", "2"}, 3, []string{"0", "1", "2"}},
	}
	for _, tt := range tests {
		p, err := Make(&job.Distribution{Type: "pytorch"}, 1, Topology{MasterPort: 1, GPUs: tt.gpus})
		if err != nil || p.PerNode != tt.want {
			t.Fatalf("gpus %v: per node %d, %v", tt.gpus, p.PerNode, err)
		}
		for i, c := range tt.cuda {
			if got := p.Processes[i].Env["CUDA_VISIBLE_DEVICES"]; got != c {
				t.Errorf("gpus %v: rank %d CUDA_VISIBLE_DEVICES %q, want %q", tt.gpus, i, got, c)
			}
		}
	}
}

func TestMoreProcessesThanGPUsShare(t *testing.T) {
	p, _ := Make(&job.Distribution{Type: "pytorch", ProcessCountPerInstance: 4}, 1, Topology{MasterPort: 1, GPUs: []string{"0", "1"}})
	for _, pr := range p.Processes {
		if pr.Env["CUDA_VISIBLE_DEVICES"] != "0,1" {
			t.Errorf("rank %d: %q", pr.Rank, pr.Env["CUDA_VISIBLE_DEVICES"])
		}
	}
}

func TestTensorFlowConfig(t *testing.T) {
	top := Topology{Nodes: []string{"a", "b"}, NodeRank: 0, MasterPort: 2222}
	p, err := Make(&job.Distribution{Type: "tensorflow", WorkerCount: 2, ParameterServerCount: 1}, 2, top)
	if err != nil {
		t.Fatal(err)
	}
	if p.WorldSize != 3 || len(p.Processes) != 2 {
		t.Fatalf("plan %+v", p)
	}
	var cfg struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(p.Processes[1].Env["TF_CONFIG"]), &cfg); err != nil {
		t.Fatal(err)
	}
	wantCluster := map[string][]string{"ps": {"a:2222"}, "worker": {"b:2222", "a:2223"}}
	if diff := cmp.Diff(wantCluster, cfg.Cluster); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	if cfg.Task.Type != "worker" || cfg.Task.Index != 1 {
		t.Errorf("task %+v", cfg.Task)
	}
}

func TestMPIHostfileAndSingle(t *testing.T) {
	p, err := Make(&job.Distribution{Type: "mpi", ProcessCountPerInstance: 2}, 2, Topology{Nodes: []string{"n0", "n1"}, MasterPort: 1})
	if err != nil || !p.MPI || p.Hostfile != "n0 slots=2\nn1 slots=2\n" || p.WorldSize != 4 {
		t.Fatalf("mpi plan %+v, %v", p, err)
	}
	s, _ := Make(nil, 1, Topology{GPUs: []string{"0"}})
	if len(s.Processes) != 1 || s.Processes[0].Log != "std_log.txt" || s.Processes[0].Env["CUDA_VISIBLE_DEVICES"] != "0" {
		t.Errorf("single plan %+v", s)
	}
	if _, err := Make(nil, 2, Topology{Nodes: []string{"one"}}); err == nil {
		t.Error("a run with fewer nodes than instance_count was planned")
	}
}

// A node whose rank has no address in the run's nodes is an error, not an index out of range
// (a supervisor on node 1 of a run whose spec listed no nodes panicked).
func TestNodeRankOutsideTheNodesIsAnError(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes []string
		rank  int
	}{
		{"no nodes, rank 1", nil, 1},
		{"two nodes, rank 2", []string{"a", "b"}, 2},
		{"negative rank", []string{"a"}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Make(nil, max(len(c.nodes), 1), Topology{Nodes: c.nodes, NodeRank: c.rank})
			if err == nil || !strings.Contains(err.Error(), "rank") {
				t.Fatalf("Make = %v, want an error naming the rank", err)
			}
		})
	}
}
