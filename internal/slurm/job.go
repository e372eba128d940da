package slurm

import (
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// Job is what Slurm says about one job, from squeue, scontrol show job or sacct.
type Job struct {
	ID    string `json:"id"`
	Name  string `json:"name,omitempty"`
	State string `json:"state"` // base state in capitals: PENDING, RUNNING, TIMEOUT, ...
	// Reason is Slurm's reason: why it is pending (Resources, Priority, ...) or why it ended.
	Reason   string `json:"reason,omitempty"`
	NodeList string `json:"node_list,omitempty"`
	// Exit is set when the source gives an exit code ("3:0" → Code 3; "0:15" → Signal 15).
	Exit *Exit `json:"exit,omitempty"`
	// By is who cancelled it, when sacct says ("CANCELLED by 1000").
	By string `json:"by,omitempty"`
}

// Exit is a job's exit code and the signal that ended it (0 when none).
type Exit struct {
	Code   int `json:"code"`
	Signal int `json:"signal"`
}

// Node is one node of a partition, from sinfo.
type Node struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	CPUs     int    `json:"cpus"`
	MemoryMB int64  `json:"memory_mb"`
	// Gres is the node's generic resources as Slurm writes them ("gpu:a100:4(S:0-1)"), "" when none.
	Gres string `json:"gres,omitempty"`
}

// GPUs counts the GPUs in the node's gres ("gpu:2", "gpu:a100:4(S:0)", "gpu:a100:2,gpu:v100:1").
func (n Node) GPUs() int {
	total := 0
	for _, g := range strings.Split(n.Gres, ",") {
		g, _, _ = strings.Cut(g, "(")
		parts := strings.Split(g, ":")
		if len(parts) < 2 || parts[0] != "gpu" {
			continue
		}
		var c int
		if _, err := fmt.Sscanf(parts[len(parts)-1], "%d", &c); err == nil && c > 0 {
			total += c
		}
	}
	return total
}

// Verdict is a Slurm job's state in Hangar's terms.
type Verdict struct {
	// Pending: the job waits in Slurm's queue (or for its nodes to boot); Reason says why.
	Pending bool
	// Alive: the job exists and has not ended (pending, running, completing, suspended).
	Alive bool
	// Final: the job ended; State, ExitCode and Reason say how.
	Final bool
	// Killed: Slurm ended it (time limit, cancel, node failure, preemption, memory), as opposed to
	// its batch script exiting by itself (COMPLETED, FAILED).
	Killed   bool
	State    job.State
	ExitCode *int
	Reason   string
}

// Judge reads a job's Slurm state as a Hangar state with a reason. A job Slurm killed ends with
// that kill's name first in the reason (TIMEOUT, CANCELLED, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY),
// so that it reads the same whether or not the supervisor could report.
func Judge(j Job) Verdict {
	id := "Slurm job " + j.ID
	switch j.State {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		return Verdict{Pending: true, Alive: true, Reason: pendingReason(id, j.Reason)}
	case "CONFIGURING":
		return Verdict{Pending: true, Alive: true, Reason: id + " is CONFIGURING: its nodes are booting"}
	case "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING":
		return Verdict{Alive: true, Reason: id + " is " + j.State}
	case "COMPLETED":
		return Verdict{Final: true, State: job.Completed, ExitCode: exitCode(j), Reason: id + " COMPLETED"}
	case "FAILED":
		return Verdict{Final: true, State: job.Failed, ExitCode: exitCode(j), Reason: failedReason(id, j)}
	}
	killed := map[string]struct {
		state job.State
		what  string
	}{
		"CANCELLED":     {job.Canceled, "cancelled in Slurm"},
		"TIMEOUT":       {job.Canceled, "Slurm's time limit was reached"},
		"DEADLINE":      {job.Canceled, "Slurm's deadline was reached"},
		"REVOKED":       {job.Canceled, "revoked by Slurm's federation"},
		"NODE_FAIL":     {job.Failed, "a node of the job failed"},
		"BOOT_FAIL":     {job.Failed, "a node of the job failed to boot"},
		"PREEMPTED":     {job.Failed, "preempted by Slurm (Hangar does not requeue it)"},
		"OUT_OF_MEMORY": {job.Failed, "the job ran out of memory"},
		"SPECIAL_EXIT":  {job.Failed, "ended with a special exit state"},
	}
	if k, ok := killed[j.State]; ok {
		what := k.what
		if j.State == "CANCELLED" && j.By != "" {
			what += " by uid " + j.By
		}
		return Verdict{Final: true, Killed: true, State: k.state, ExitCode: exitCode(j),
			Reason: fmt.Sprintf("%s: %s (%s)", j.State, what, id)}
	}
	// An unknown state (a newer Slurm): the job exists; say so rather than guess an ending.
	return Verdict{Alive: true, Reason: id + " is " + j.State}
}

// pendingGloss says in words what common pending reasons mean.
var pendingGloss = map[string]string{
	"Resources":              "waiting for the resources it asks for",
	"Priority":               "jobs of higher priority are ahead of it",
	"Dependency":             "waiting for the jobs it depends on",
	"BeginTime":              "its begin time has not come",
	"JobHeldUser":            "held by its user",
	"JobHeldAdmin":           "held by an administrator",
	"PartitionNodeLimit":     "it asks for more nodes than the partition allows",
	"PartitionTimeLimit":     "it asks for more time than the partition allows",
	"PartitionDown":          "the partition is down",
	"PartitionInactive":      "the partition is inactive",
	"ReqNodeNotAvail":        "a node it needs is unavailable",
	"NodeDown":               "a node it needs is down",
	"QOSMaxJobsPerUserLimit": "the QOS's limit of jobs per user is reached",
	"QOSGrpCpuLimit":         "the QOS's CPU limit is reached",
	"QOSGrpNodeLimit":        "the QOS's node limit is reached",
	"AssocGrpCpuLimit":       "the account's CPU limit is reached",
	"AssocGrpNodeLimit":      "the account's node limit is reached",
	"AssocMaxJobsLimit":      "the account's limit of running jobs is reached",
	"Reservation":            "waiting for its reservation",
	"Licenses":               "waiting for licenses",
}

func pendingReason(id, reason string) string {
	if reason == "" || reason == "None" || reason == "(null)" {
		return id + " is PENDING"
	}
	key, _, _ := strings.Cut(reason, ",")
	if g, ok := pendingGloss[key]; ok {
		return fmt.Sprintf("%s is PENDING: %s (%s)", id, reason, g)
	}
	return fmt.Sprintf("%s is PENDING: %s", id, reason)
}

func failedReason(id string, j Job) string {
	if j.Exit == nil {
		return id + " FAILED"
	}
	if j.Exit.Signal != 0 {
		return fmt.Sprintf("%s FAILED: killed by signal %d", id, j.Exit.Signal)
	}
	return fmt.Sprintf("%s FAILED: exit code %d", id, j.Exit.Code)
}

// exitCode is the shell-style exit status: the code, or 128+signal when a signal ended it.
func exitCode(j Job) *int {
	if j.Exit == nil {
		return nil
	}
	c := j.Exit.Code
	if j.Exit.Signal != 0 {
		c = 128 + j.Exit.Signal
	}
	return &c
}
