package provider

import (
	"context"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hangar-ml/hangar/internal/sizes"
)

// CreateRequest is one node to create.
type CreateRequest struct {
	Pool   string // the cluster's name
	NodeID string
	Size   sizes.Size
	// JoinURL is the workspace server as the node will reach it; JoinToken admits its agent.
	JoinURL   string
	JoinToken string
	// JoinCA is the PEM of an https server's certificate ("" for plain HTTP): the agent trusts
	// only it (HANGAR_JOIN_CA).
	JoinCA string
	// WorkDir is the agent's directory on the node ("" lets the provider choose).
	WorkDir string
}

// DeleteRequest names a node to delete.
type DeleteRequest struct {
	Pool       string
	NodeID     string
	ProviderID string
}

// Provider creates and deletes a cluster's machines. Create returns once the machine is
// starting (the agent joins later); its id is what Delete needs. Delete of a machine already
// gone succeeds.
type Provider interface {
	Create(ctx context.Context, req CreateRequest) (providerID string, err error)
	Delete(ctx context.Context, req DeleteRequest) error
}

// Preempter is an optional capability of providers of low-priority machines: the provider ids
// of machines the cloud took back.
type Preempter interface {
	Preempted(ctx context.Context) ([]string, error)
}

// Env is the variables a create hook receives.
func Env(req CreateRequest) []string {
	return []string{
		"HANGAR_JOIN_URL=" + req.JoinURL,
		"HANGAR_JOIN_TOKEN=" + req.JoinToken,
		"HANGAR_JOIN_CA=" + req.JoinCA,
		"HANGAR_NODE_ID=" + req.NodeID,
		"HANGAR_POOL=" + req.Pool,
		"HANGAR_SIZE=" + req.Size.Name,
		"HANGAR_CORES=" + strconv.Itoa(req.Size.Cores),
		"HANGAR_MEMORY_BYTES=" + strconv.FormatInt(req.Size.MemoryBytes, 10),
		"HANGAR_GPUS=" + strconv.Itoa(req.Size.GPUs),
		"HANGAR_WORK_DIR=" + req.WorkDir,
	}
}

// BaseEnv is this process's environment without the workspace's home and credentials and
// without Hangar's per-node variables (so that a value from the server's environment never leaks
// in); the node's settings (HANGAR_SANDBOX, HANGAR_RUN_USER, ...) pass on to the agents a
// provider starts.
func BaseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HANGAR_HOME", "HANGAR_DATABASE_URL", "HANGAR_TOKEN", "HANGAR_URL", "HANGAR_TLS_FINGERPRINT",
			"HANGAR_JOIN_URL", "HANGAR_JOIN_TOKEN", "HANGAR_JOIN_CA", "HANGAR_NODE_ID", "HANGAR_POOL",
			"HANGAR_SIZE", "HANGAR_CORES", "HANGAR_MEMORY_BYTES", "HANGAR_GPUS", "HANGAR_WORK_DIR", "HANGAR_PROVIDER_ID",
			"HANGAR_HIDE":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Explainer is an optional capability: what the provider can tell about a node whose agent
// has not joined (its create hook's output, the agent's log), in one line, for the reason
// shown on `compute show` and on the runs waiting for the node; "" when it knows nothing.
type Explainer interface {
	Explain(ctx context.Context, req DeleteRequest) string
}

// Summary limits: the last lines of a program's output that a reason carries.
const (
	summaryLines = 5
	summaryBytes = 600
)

// Summary turns the tail of a program's output into one line for a reason: its last few
// non-empty lines joined with " | ", cut to the last summaryBytes bytes.
func Summary(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > summaryLines {
		lines = lines[len(lines)-summaryLines:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > summaryBytes {
		cut := len(s) - summaryBytes
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return s
}
