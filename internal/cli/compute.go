package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
)

func newComputeCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compute",
		Short: "Create, attach, list and inspect compute targets",
		Long: `Compute targets are the named places a workspace runs jobs. Every workspace has local (this
machine); compute create adds more local targets (type: local), managed clusters of Hangar
agents (type: amlcompute), compute instances (type: computeinstance: a development machine
with start, stop and idle shutdown) and the serverless pool (type: serverless: per-size clusters
made for jobs that say compute: serverless); compute attach adds VMs reached over SSH (type: virtualmachine),
Slurm clusters (type: slurm) and Kubernetes clusters (type: kubernetes: each job a batch/v1 Job).`,
		Example: "  hangar compute list\n  hangar compute show -n local\n  hangar compute create -f cluster.yml",
	}
	cmd.AddCommand(newComputeListCmd(env), newComputeShowCmd(env),
		newComputePutCmd(env, "create", "Create a compute target from a YAML file (verified first)",
			"  hangar compute create -f cluster.yml\n  hangar compute create -f local-containers.yml", false),
		newComputePutCmd(env, "attach", "Attach an existing machine or cluster (virtualmachine/ssh, slurm, kubernetes)",
			"  hangar compute attach -f vm.yml\n  hangar compute attach -f slurm.yml --set partition=gpu\n  hangar compute attach -f k8s.yml --set namespace=ml-jobs", false),
		newComputePutCmd(env, "update", "Change a compute target from a YAML file",
			"  hangar compute update -f cluster.yml --set max_instances=8", true),
		newComputeDeleteCmd(env, "delete", "Delete a compute target (refused while runs are active, unless --force)"),
		newComputeDeleteCmd(env, "detach", "Detach an attached target (refused while runs are active, unless --force)"))
	cmd.AddCommand(newComputeListSizesCmd(env), newComputeAddSizeCmd(env), newComputeDeleteSizeCmd(env))
	cmd.AddCommand(newComputeNodeCmd(env))
	cmd.AddCommand(newComputeInstanceCmds(env)...)
	return groupCmd(cmd)
}

func newComputeListCmd(env *Env) *cobra.Command {
	return listCmd(env, "List compute targets", "  hangar compute list\n  hangar compute list -o json",
		func(ctx context.Context, c *api.Client) ([]api.Compute, error) { return c.Computes.List(ctx) },
		[]string{"NAME", "TYPE", "STATE", "DEFAULT", "ACTIVE RUNS"},
		func(c api.Compute) []string {
			def := ""
			if c.Default {
				def = "*"
			}
			return []string{c.Name, c.Type, c.State, def, strconv.Itoa(c.ActiveRuns)}
		})
}

func newComputeShowCmd(env *Env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a compute target: its node, or a cluster's nodes and timeline",
		Example: "  hangar compute show local\n  hangar compute show -n local -o yaml",
		RunE: env.withClient(func(cmd *cobra.Command, args []string, c *api.Client) error {
			ct, err := c.Computes.Get(cmd.Context(), name)
			if err != nil {
				return err
			}
			if ct.Type == compute.TypeInstance {
				in, err := c.Instances.Get(cmd.Context(), name)
				if err != nil {
					return err
				}
				withJupyterURL(in, c.BaseURL())
				return env.printData(instanceView{Compute: *ct, Instance: in}, func(w io.Writer) error { return showInstance(w, ct, in) })
			}
			if ct.Type != "cluster" {
				return env.printData(ct, func(w io.Writer) error { return showCompute(w, ct) })
			}
			view, err := clusterView(cmd.Context(), c, ct)
			if err != nil {
				return err
			}
			return env.printData(view, func(w io.Writer) error { return showCluster(w, view) })
		}),
	}
	addComputeArg(env, cmd, &name, "compute target")
	return cmd
}

func showCompute(w io.Writer, c *api.Compute) error {
	pairs := [][2]string{
		{"Name", c.Name}, {"Type", c.Type}, {"State", c.State}, {"Description", c.Description},
		{"Default", strconv.FormatBool(c.Default)}, {"Active runs", strconv.Itoa(c.ActiveRuns)},
	}
	pairs = append(pairs, specPairs(c)...)
	if c.Type == "slurm" {
		return showSlurmNodes(w, pairs, c.Node)
	}
	if n := c.Node; n != nil {
		gpus := "none"
		if len(n.GPUs) > 0 {
			var gs []string
			for _, g := range n.GPUs {
				gs = append(gs, fmt.Sprintf("%d: %s (%s)", g.Index, g.Name, humanBytes(g.MemoryBytes)))
			}
			gpus = strings.Join(gs, ", ")
		}
		rt := n.ContainerRuntime
		if rt == "" {
			rt = "none (images run on the host, with a warning)"
		}
		pairs = append(pairs, [][2]string{
			{"Host", n.Hostname}, {"OS", n.OS + " " + n.Arch}, {"Kernel", n.Kernel},
			{"Cores", strconv.Itoa(n.Cores)}, {"Memory", humanBytes(n.MemoryBytes)},
			{"GPUs", gpus}, {"Containers", rt},
		}...)
	}
	return kv(w, pairs)
}

// specPairs shows the settings that matter per kind of target.
func specPairs(c *api.Compute) [][2]string {
	s := c.Spec
	if s == nil {
		return nil
	}
	var out [][2]string
	switch {
	case s.Local != nil:
		out = append(out, [2]string{"Require container", strconv.FormatBool(s.Local.RequireContainer)})
		if s.Local.MaxConcurrentRuns > 0 {
			out = append(out, [2]string{"Max concurrent runs", strconv.Itoa(s.Local.MaxConcurrentRuns)})
		}
	case s.SSH != nil:
		out = append(out, [2]string{"Address", s.SSH.AdminUsername + "@" + s.SSH.Address()},
			[2]string{"Work dir", s.SSH.WorkDir}, [2]string{"Host key", s.SSH.HostKey})
	case s.Slurm != nil:
		out = append(out, slurmPairs(s.Slurm)...)
	case s.Kubernetes != nil:
		out = append(out, kubePairs(s.Kubernetes)...)
	case s.Cluster != nil:
		cl := s.Cluster
		out = append(out, [2]string{"Size", cl.Size}, [2]string{"Tier", cl.Tier},
			[2]string{"Instances", fmt.Sprintf("min %d, max %d", cl.MinInstances, cl.MaxInstances)},
			[2]string{"Idle before scale down", fmt.Sprintf("%ds", cl.IdleTimeBeforeScaleDown)},
			[2]string{"Provider", cl.Provider.Type})
	}
	if c.AttachedAt != nil {
		out = append(out, [2]string{"Attached", fmtTime(c.AttachedAt)})
	}
	return out
}

// kubePairs shows a Kubernetes target's settings: where its Jobs go and what their pods look like.
func kubePairs(k *compute.KubernetesSpec) [][2]string {
	kubeconfig := k.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = "default ($KUBECONFIG, ~/.kube/config or in-cluster)"
	}
	sup := "image " + k.Supervisor.Image
	if k.Supervisor.HostPath != "" {
		sup = "host path " + k.Supervisor.HostPath
	}
	out := [][2]string{{"Kubeconfig", kubeconfig}, {"Context", k.Context}, {"Namespace", k.Namespace},
		{"Supervisor", sup}, {"Default image", k.DefaultImage}, {"Server URL for pods", k.ServerURL},
		{"Kueue queue", k.QueueName}}
	var types []string
	for _, name := range slices.Sorted(maps.Keys(k.InstanceTypes)) {
		it := k.InstanceTypes[name]
		desc := name
		if name == k.DefaultInstanceType {
			desc += " (default)"
		}
		var parts []string
		for _, r := range []struct {
			what, cpu, mem string
			gpu            int
		}{
			{"requests", it.Requests.CPU, it.Requests.Memory, it.Requests.GPU},
			{"limits", it.Limits.CPU, it.Limits.Memory, it.Limits.GPU}} {
			var q []string
			if r.cpu != "" {
				q = append(q, "cpu "+r.cpu)
			}
			if r.mem != "" {
				q = append(q, "memory "+r.mem)
			}
			if r.gpu > 0 {
				q = append(q, fmt.Sprintf("nvidia.com/gpu %d", r.gpu))
			}
			if len(q) > 0 {
				parts = append(parts, r.what+" "+strings.Join(q, ", "))
			}
		}
		if len(it.NodeSelector) > 0 {
			parts = append(parts, fmt.Sprintf("nodes %v", it.NodeSelector))
		}
		if len(parts) > 0 {
			desc += ": " + strings.Join(parts, "; ")
		}
		types = append(types, desc)
	}
	return append(out, [2]string{"Instance types", strings.Join(types, " | ")})
}

// slurmPairs shows a Slurm target's settings: where its commands run and how jobs become sbatch options.
func slurmPairs(sl *compute.SlurmSpec) [][2]string {
	where := "this machine"
	if l := sl.Login; l != nil {
		where = fmt.Sprintf("%s@%s (login host), work dir %s", l.AdminUsername, l.Address(), l.WorkDir)
	}
	out := [][2]string{{"Partition", sl.Partition}, {"Account", sl.Account}, {"QOS", sl.QOS},
		{"Slurm commands on", where}, {"SLURM_CONF", sl.SlurmConf}}
	if sl.MaxNodes > 0 {
		out = append(out, [2]string{"Max nodes", strconv.Itoa(sl.MaxNodes)})
	}
	if sl.TimeLimitSeconds > 0 {
		out = append(out, [2]string{"Default time limit", (time.Duration(sl.TimeLimitSeconds) * time.Second).String()})
	}
	if len(sl.SbatchArgs) > 0 {
		out = append(out, [2]string{"sbatch args", strings.Join(sl.SbatchArgs, " ")})
	}
	var sizes []string
	for name, sz := range sl.SizeMap {
		var opts []string
		if sz.CPUsPerTask > 0 {
			opts = append(opts, fmt.Sprintf("--cpus-per-task=%d", sz.CPUsPerTask))
		}
		if sz.Mem != "" {
			opts = append(opts, "--mem="+sz.Mem)
		}
		if sz.Gres != "" {
			opts = append(opts, "--gres="+sz.Gres)
		}
		sizes = append(sizes, name+" → "+strings.Join(opts, " "))
	}
	sort.Strings(sizes)
	out = append(out, [2]string{"Sizes", strings.Join(sizes, "; ")})
	var prios []string
	for level, p := range sl.PriorityMap {
		var opts []string
		if p.Nice != 0 {
			opts = append(opts, fmt.Sprintf("--nice=%d", p.Nice))
		}
		if p.QOS != "" {
			opts = append(opts, "--qos="+p.QOS)
		}
		prios = append(prios, level+" → "+strings.Join(opts, " "))
	}
	sort.Strings(prios)
	return append(out, [2]string{"Priorities", strings.Join(prios, "; ")})
}

// showSlurmNodes prints a Slurm target and its partition's nodes as sinfo reports them now (the
// backend's Describe: Slurm version and partition in OS, "node state, ..." in Hostname).
func showSlurmNodes(w io.Writer, pairs [][2]string, n *compute.NodeInfo) error {
	if n != nil {
		pairs = append(pairs, [][2]string{{"Slurm", n.OS}, {"CPUs", strconv.Itoa(n.Cores)},
			{"Memory", humanBytes(n.MemoryBytes)}, {"GPUs", strconv.Itoa(len(n.GPUs))}}...)
	}
	if err := kv(w, pairs); err != nil || n == nil || n.Hostname == "" {
		return err
	}
	var rows [][]string
	for _, ns := range strings.Split(n.Hostname, ", ") {
		name, state, _ := strings.Cut(ns, " ")
		rows = append(rows, []string{"  " + name, state})
	}
	fmt.Fprintln(w, "Nodes:")
	return table(w, []string{"  NODE", "STATE"}, rows)
}
