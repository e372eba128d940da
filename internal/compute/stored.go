package compute

import (
	"encoding/json"
	"fmt"
	"time"
)

// Stored is what a target's Properties hold: its spec (secrets sealed by the workspace key) and
// what attaching it found.
type Stored struct {
	Spec       Spec      `json:"spec"`
	Node       *NodeInfo `json:"node,omitempty"`
	AttachedAt time.Time `json:"attached_at,omitzero"`
}

// Load decodes a target's Properties; a target without them (the built-in local) gets a spec
// with only its name and type.
func Load(t Target) (*Stored, error) {
	st := &Stored{Spec: Spec{Name: t.Name, Type: t.Type, Description: t.Description}}
	if len(t.Properties) == 0 || string(t.Properties) == "{}" {
		return st, nil
	}
	if err := json.Unmarshal(t.Properties, st); err != nil {
		return nil, fmt.Errorf("decode compute %s: %w", t.Name, err)
	}
	return st, nil
}

// SecretFields returns pointers to every secret value of the spec, for sealing and unsealing.
func (s *Spec) SecretFields() []*string {
	var out []*string
	for _, h := range s.hosts() {
		out = append(out, &h.AdminPassword, &h.PrivateKey)
	}
	for _, st := range s.sshSettings() {
		out = append(out, &st.AdminPassword)
	}
	return out
}

// RequiresContainer reports whether jobs on the target must run in a container image.
func (s *Spec) RequiresContainer() bool {
	return (s.Local != nil && s.Local.RequireContainer) || (s.SSH != nil && s.SSH.RequireContainer)
}

// VMHost is the host of an attached VM target ("" for any other target, or one whose
// properties do not decode).
func VMHost(t Target) string {
	if st, err := Load(t); err == nil && st.Spec.SSH != nil {
		return st.Spec.SSH.Host
	}
	return ""
}
