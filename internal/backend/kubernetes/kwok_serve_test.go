package kubernetes_test

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
)

// The API server takes the pod of a replica whose image serves by its own entrypoint (a native
// sidecar, a gate, the image as the main container; a pod failure policy on the sidecar's exit),
// and the scheduler places it; the image's log reads as empty while the image has not started
// (kwok never starts containers of its own accord).
func TestKwokServesByEntrypoint(t *testing.T) {
	k := newKwok(t, "30s", nil)
	l, h := k.submit(job.Spec{Environment: job.Environment{Image: "localhost/hangar-busybox:latest"},
		EnvironmentVariables: map[string]string{"GREETING": "hi"},
		Serve: &job.Serve{Endpoint: "e", Deployment: "d", Entrypoint: true, Port: 8080, Probe: "/",
			ModelInput: "model", ModelMount: "/var/azureml-app/azureml-models/m/1"}})
	k.until(h, "the pod to be placed", func(st backend.Status, _ string, _ bool) bool {
		_, pods, _, _ := k.objects(l.RunID)
		return len(pods) == 1 && pods[0].Spec.NodeName != ""
	})
	_, pods, _, _ := k.objects(l.RunID)
	p := pods[0].Spec
	var init []string
	for _, c := range p.InitContainers {
		init = append(init, c.Name)
	}
	if !slices.Equal(init, []string{"hangar", "run", "gate"}) || len(p.Containers) != 1 || p.Containers[0].Name != "serve" ||
		p.Containers[0].Command != nil || p.InitContainers[1].RestartPolicy == nil {
		t.Errorf("the pod as the API server stored it: init %v, containers %+v", init, p.Containers)
	}
	rc, err := k.b.ContainerLog(t.Context(), h, time.Time{}, 0)
	if err != nil {
		t.Fatalf("ContainerLog before the image started: %v", err)
	}
	if b, _ := io.ReadAll(rc); len(b) != 0 {
		t.Errorf("log before the image started: %q", b)
	}
	rc.Close()
}
