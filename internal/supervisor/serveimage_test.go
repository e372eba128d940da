package supervisor

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// The model is mounted read-only where Azure puts it: a folder model under its folder's name,
// a one-file model's folder as AZUREML_MODEL_DIR itself; what a -v argument cannot say is refused.
func TestModelMount(t *testing.T) {
	for _, tc := range []struct {
		name, input, folder, mount string
		want                       []string
		err                        string
	}{
		{"folder model", "/runs/r/inputs/model", "model", "/var/azureml-app/azureml-models/m/1",
			[]string{"-v", "/runs/r/inputs/model:/var/azureml-app/azureml-models/m/1/model:ro"}, ""},
		{"one-file model", "/runs/r/inputs/model", "", "/models",
			[]string{"-v", "/runs/r/inputs/model:/models:ro"}, ""},
		{"not materialized", "", "model", "/models", nil, "not materialized"},
		{"relative mount", "/in", "", "models", nil, `model mount path "models"`},
		{"mount with a colon", "/in", "", "/models:rw", nil, `model mount path "/models:rw"`},
		{"mount not clean", "/in", "", "/a/../b", nil, `model mount path "/a/../b"`},
		{"root mount", "/in", "", "/", nil, `model mount path "/"`},
		{"folder escapes", "/in", "../x", "/models", nil, `model folder "../x"`},
		{"input with a comma", "/in,x", "", "/models", nil, "holds : or ,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := modelMount(tc.input, tc.folder, tc.mount)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A replica served by its image's entrypoint gets a free port of the node's loopback published
// to the image's own, the supervisor's proxy where the router reaches it, PORT and
// AZUREML_MODEL_DIR as the container sees them, and no container runtime is an error naming the
// field rather than a command run on the host.
func TestPrepareImageServe(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler()) // the workspace server, on loopback
	t.Cleanup(server.Close)
	s := newTestSupervisor(t, server.URL, 0)
	s.spec.Replica = &api.ReplicaConfig{Secret: "hrs1.s"}
	s.spec.Spec = job.Spec{Environment: job.Environment{Image: "tfs:1"},
		Serve: &job.Serve{Entrypoint: true, Port: 8501, ModelInput: "model", ModelFolder: "half_plus_two",
			ModelMount: "/var/azureml-app/azureml-models/hpt/3"}}
	w := &workspace{}
	env := map[string]string{}
	if err := s.serving.prepare(w, map[string]string{"inputs.model": "/run/inputs/model"}, env); err != nil {
		t.Fatal(err)
	}
	if w.imageServe == nil || w.servePort == 0 || w.servePort != w.imageServe.proxyPort || w.imageServe.hostPort == 0 {
		t.Fatalf("servePort %d, imageServe %+v; want the proxy's port reported, the image's on loopback", w.servePort, w.imageServe)
	}
	wantEnv := map[string]string{"PORT": "8501", "AZUREML_MODEL_DIR": "/var/azureml-app/azureml-models/hpt/3"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantArgs := []string{"-p", "127.0.0.1:" + strconv.Itoa(w.imageServe.hostPort) + ":8501",
		"-v", "/run/inputs/model:/var/azureml-app/azureml-models/hpt/3/half_plus_two:ro"}
	if diff := cmp.Diff(wantArgs, w.imageServe.runArgs()); diff != "" {
		t.Errorf("run args (-want +got):\n%s", diff)
	}

	var log bytes.Buffer
	err := s.serving.checkImage(w, &log)
	if err == nil || !strings.Contains(err.Error(), "environment.image: tfs:1 serves by its own entrypoint, which needs a container runtime") {
		t.Errorf("no runtime: %v", err)
	}
	w.container = &container{rt: "podman", name: "hangar-r", image: "tfs:1"}
	if err := s.serving.checkImage(w, &log); err != nil || !strings.Contains(log.String(), "its port 8501 is published on 127.0.0.1:"+strconv.Itoa(w.imageServe.hostPort)) {
		t.Errorf("with a runtime: %v, log %q", err, log.String())
	}
}
