package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hangar-ml/hangar/internal/tokens"
)

// IdentityFile, in the work dir, keeps a joined agent's node id and agent token (mode 0600), so
// that a restarted agent re-registers as the same node without a join token.
const IdentityFile = "agent.json"

type identity struct {
	NodeID     string `json:"node_id"`
	Pool       string `json:"pool"`
	AgentToken string `json:"agent_token"`
}

func loadIdentity(dir string) (identity, error) {
	var id identity
	b, err := os.ReadFile(filepath.Join(dir, IdentityFile))
	if err != nil {
		return id, err
	}
	if err := json.Unmarshal(b, &id); err != nil || id.NodeID == "" || id.AgentToken == "" {
		return id, fmt.Errorf("read %s: not an agent identity", filepath.Join(dir, IdentityFile))
	}
	return id, nil
}

func saveIdentity(dir string, id identity) error {
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, IdentityFile)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		return fmt.Errorf("save agent identity: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("save agent identity: %w", err)
	}
	return nil
}

// tokenNode reads the node id a join token names, without verifying it (only the server can):
// the agent uses it to tell whether a saved identity is for the same node.
func tokenNode(token string) string { return tokens.JoinNode(token) }
