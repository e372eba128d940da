package kubernetes

import (
	"encoding/json"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// The pods' supervisors get the https server's certificate in their config Secret: the only one
// they trust.
func TestBuildHandsServerCA(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	r := Run{RunID: "quiet-otter-12", Token: "tok", Attempt: 1, ServerURL: "https://10.0.0.1:8700", ServerCA: ca, Target: target(),
		Spec: job.Spec{Command: "python train.py", Resources: job.Resources{InstanceType: "gpu"},
			Environment: job.Environment{Image: "pytorch/pytorch:2.4"}}}
	o, err := Build(r)
	if err != nil {
		t.Fatal(err)
	}
	var cfg api.SupervisorConfig
	if err := json.Unmarshal(o.Secret.Data["supervisor.json"], &cfg); err != nil || cfg.ServerCA != ca || cfg.ServerURL != r.ServerURL {
		t.Errorf("supervisor config: server %q, ca %q (%v)", cfg.ServerURL, cfg.ServerCA, err)
	}
}
