package compute

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type rot13 struct{}

func (rot13) Decrypt(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "sealed:") {
		return nil, errors.New("not sealed")
	}
	return []byte(strings.TrimPrefix(s, "sealed:")), nil
}

func TestResolverUnseals(t *testing.T) {
	spec := Spec{Name: "vm", Type: TypeSSH, SSH: &SSHSpec{SSHHost: SSHHost{Host: "h", AdminUsername: "u",
		AdminPassword: "sealed:pw", PrivateKey: "sealed:key"}}}
	props, err := json.Marshal(Stored{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]*Target{"vm": {Name: "vm", Type: TypeSSH, Properties: props}}
	lookup := func(_ context.Context, name string) (*Target, error) {
		if t, ok := targets[name]; ok {
			return t, nil
		}
		return nil, errors.New("compute " + name + " not found")
	}
	st, err := Resolver{Lookup: lookup, Secrets: rot13{}}.Resolve(t.Context(), "vm")
	if err != nil {
		t.Fatal(err)
	}
	if h := st.Spec.SSH.SSHHost; h.AdminPassword != "pw" || h.PrivateKey != "key" || h.Host != "h" {
		t.Errorf("resolved host %+v, want its secrets unsealed", h)
	}
	if _, err := (Resolver{Lookup: lookup}).Resolve(t.Context(), "vm"); err == nil || !strings.Contains(err.Error(), "compute vm: no workspace key") {
		t.Errorf("without a key: %v", err)
	}
	if _, err := (Resolver{Lookup: lookup, Secrets: rot13{}}).Resolve(t.Context(), "nope"); err == nil || !strings.Contains(err.Error(), "nope not found") {
		t.Errorf("unknown target: %v", err)
	}
	if _, err := (Resolver{}).Resolve(t.Context(), "vm"); err == nil {
		t.Error("a resolver without a lookup resolved")
	}
}
