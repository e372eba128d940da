package launch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Topology is where a run executes: its nodes in rank order, and this node's place among them.
type Topology struct {
	// Nodes are the addresses of the run's nodes (node rank = index); other nodes reach them there.
	Nodes []string
	// NodeRank is the node being planned.
	NodeRank int
	// MasterPort is the rendezvous port on node 0 (the same for every node of the run).
	MasterPort int
	// GPUs are this node's GPUs given to the run (indexes for CUDA_VISIBLE_DEVICES).
	GPUs []string
}

// Process is one process to start on this node.
type Process struct {
	Rank      int // global rank
	LocalRank int
	// Env holds the variables that make the process its rank.
	Env map[string]string
	// Log is its own log file under user_logs/ (std_log_process_<rank>.txt, or std_log.txt for a
	// single-process run).
	Log string
}

// Plan is the processes this node starts, and whether they run under mpirun.
type Plan struct {
	Processes []Process
	// MPI is true when the node runs the command once under the MPI launcher, which starts the
	// ranks (Processes then describes them for the dry run).
	MPI bool
	// Hostfile is the MPI hostfile (one line per node with its slots).
	Hostfile string
	// PerNode is the number of processes on each node, WorldSize the total.
	PerNode, WorldSize int
}

// Make plans the processes for a run's distribution on the node of the topology.
func Make(d *job.Distribution, instances int, t Topology) (Plan, error) {
	if instances < 1 {
		instances = 1
	}
	if len(t.Nodes) == 0 {
		t.Nodes = []string{"127.0.0.1"}
	}
	if len(t.Nodes) != instances {
		return Plan{}, fmt.Errorf("the run has %d nodes, resources.instance_count is %d", len(t.Nodes), instances)
	}
	if t.NodeRank < 0 || t.NodeRank >= len(t.Nodes) {
		return Plan{}, fmt.Errorf("this node's rank is %d, but the run's nodes are %d (no address for it)", t.NodeRank, len(t.Nodes))
	}
	if d == nil {
		return single(t), nil
	}
	switch d.Type {
	case "pytorch":
		return pytorch(d, t), nil
	case "tensorflow":
		return tensorflow(d, instances, t)
	case "mpi":
		return mpi(d, t), nil
	case "ray":
		return Plan{}, fmt.Errorf("distribution ray is not supported yet")
	}
	return Plan{}, fmt.Errorf("unknown distribution type %q", d.Type)
}

func single(t Topology) Plan {
	env := map[string]string{}
	if len(t.GPUs) > 0 {
		env["CUDA_VISIBLE_DEVICES"] = strings.Join(t.GPUs, ",")
	}
	return Plan{Processes: []Process{{Env: env, Log: "std_log.txt"}}, PerNode: 1, WorldSize: 1}
}

// perNode is process_count_per_instance, by default one per GPU (or one).
func perNode(d *job.Distribution, t Topology) int {
	if d.ProcessCountPerInstance > 0 {
		return d.ProcessCountPerInstance
	}
	return max(len(t.GPUs), 1)
}

// gpuSlice gives local rank i of n its share of the node's GPUs (none when there are fewer GPUs
// than processes would make the share empty: then processes share all of them).
func gpuSlice(gpus []string, i, n int) string {
	if len(gpus) == 0 {
		return ""
	}
	if len(gpus) < n {
		return strings.Join(gpus, ",")
	}
	k := len(gpus) / n
	return strings.Join(gpus[i*k:(i+1)*k], ",")
}

func pytorch(d *job.Distribution, t Topology) Plan {
	p := perNode(d, t)
	world := p * len(t.Nodes)
	plan := Plan{PerNode: p, WorldSize: world}
	for i := 0; i < p; i++ {
		rank := t.NodeRank*p + i
		env := map[string]string{
			"MASTER_ADDR": t.Nodes[0], "MASTER_PORT": strconv.Itoa(t.MasterPort),
			"WORLD_SIZE": strconv.Itoa(world), "RANK": strconv.Itoa(rank), "LOCAL_RANK": strconv.Itoa(i),
			"NODE_RANK": strconv.Itoa(t.NodeRank), "LOCAL_WORLD_SIZE": strconv.Itoa(p),
			"GROUP_RANK": strconv.Itoa(t.NodeRank),
			// Azure ML's names for the master, which scripts written for it read.
			"AZ_BATCH_MASTER_NODE": t.Nodes[0] + ":" + strconv.Itoa(t.MasterPort), "AZ_BATCHAI_MPI_MASTER_NODE": t.Nodes[0],
		}
		if g := gpuSlice(t.GPUs, i, p); g != "" {
			env["CUDA_VISIBLE_DEVICES"] = g
		}
		plan.Processes = append(plan.Processes, Process{Rank: rank, LocalRank: i, Env: env, Log: logName(rank)})
	}
	return plan
}

func logName(rank int) string { return fmt.Sprintf("std_log_process_%d.txt", rank) }

// tensorflow gives each task (parameter servers, then workers) a process, spread over the nodes in
// turn, with TF_CONFIG naming every task's address.
func tensorflow(d *job.Distribution, instances int, t Topology) (Plan, error) {
	workers := d.WorkerCount
	if workers <= 0 {
		workers = instances
	}
	type task struct {
		kind  string
		index int
		node  int
		port  int
	}
	var tasks []task
	counts := make([]int, len(t.Nodes))
	add := func(kind string, n int) {
		for i := 0; i < n; i++ {
			node := len(tasks) % len(t.Nodes)
			tasks = append(tasks, task{kind, i, node, t.MasterPort + counts[node]})
			counts[node]++
		}
	}
	add("ps", d.ParameterServerCount)
	add("worker", workers)
	cluster := map[string][]string{}
	for _, tk := range tasks {
		cluster[tk.kind] = append(cluster[tk.kind], t.Nodes[tk.node]+":"+strconv.Itoa(tk.port))
	}
	plan := Plan{WorldSize: len(tasks), PerNode: counts[t.NodeRank]}
	local := 0
	for rank, tk := range tasks {
		if tk.node != t.NodeRank {
			continue
		}
		cfg, err := json.Marshal(map[string]any{"cluster": cluster, "task": map[string]any{"type": tk.kind, "index": tk.index}, "environment": "cloud"})
		if err != nil {
			return Plan{}, err
		}
		env := map[string]string{"TF_CONFIG": string(cfg)}
		if g := gpuSlice(t.GPUs, local, plan.PerNode); g != "" {
			env["CUDA_VISIBLE_DEVICES"] = g
		}
		plan.Processes = append(plan.Processes, Process{Rank: rank, LocalRank: local, Env: env, Log: logName(rank)})
		local++
	}
	return plan, nil
}

// mpi runs the command once under mpirun with one slot per process; the MPI launcher starts the
// ranks and sets OMPI_COMM_WORLD_*. Processes lists them for the dry run.
func mpi(d *job.Distribution, t Topology) Plan {
	p := perNode(d, t)
	plan := Plan{MPI: true, PerNode: p, WorldSize: p * len(t.Nodes)}
	var hosts []string
	for _, n := range t.Nodes {
		hosts = append(hosts, fmt.Sprintf("%s slots=%d", n, p))
	}
	plan.Hostfile = strings.Join(hosts, "\n") + "\n"
	for i := 0; i < p; i++ {
		rank := t.NodeRank*p + i
		env := map[string]string{"OMPI_COMM_WORLD_RANK": strconv.Itoa(rank), "OMPI_COMM_WORLD_LOCAL_RANK": strconv.Itoa(i),
			"OMPI_COMM_WORLD_SIZE": strconv.Itoa(plan.WorldSize), "AZ_BATCHAI_MPI_MASTER_NODE": t.Nodes[0]}
		if g := gpuSlice(t.GPUs, i, p); g != "" {
			env["CUDA_VISIBLE_DEVICES"] = g
		}
		plan.Processes = append(plan.Processes, Process{Rank: rank, LocalRank: i, Env: env, Log: logName(rank)})
	}
	return plan
}
