// Package kubetest reaches the project's Kubernetes test cluster (scripts/setup/kubernetes.sh)
// for the Kubernetes backend's integration tests.
package kubetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hangar-ml/hangar/internal/backend/backendtest"
)

// Namespace is the namespace of the project's test cluster that tests use.
const Namespace = "hangar-test"

// Config returns the admin kubeconfig of the project's test cluster
// (scripts/setup/kubernetes.sh: an API server, controller manager and scheduler built from
// Kubernetes' modules, kwok nodes kwok-node-1 and kwok-node-2, and a real kubelet node
// hangar-kubelet): $HANGAR_KUBECONFIG, else the setup script's default. It skips the test when
// no such cluster answers; with CI set it fails instead.
func Config(t testing.TB) string {
	t.Helper()
	path := os.Getenv("HANGAR_KUBECONFIG")
	if path == "" {
		path = filepath.Join(backendtest.TestState(), "k8s", "admin.kubeconfig")
	}
	cs, err := Client(path)
	if err == nil {
		_, err = cs.Discovery().ServerVersion()
	}
	if err == nil {
		return path
	}
	backendtest.Unavailable(t, fmt.Sprintf("this test needs the Kubernetes test cluster (bash scripts/setup/kubernetes.sh; HANGAR_KUBECONFIG=%s): %v", path, err))
	return ""
}

// Interface is the API client tests use.
type Interface = k8s.Interface

// Client is an API client from a kubeconfig file.
func Client(path string) (*k8s.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 20 * time.Second
	return k8s.NewForConfig(cfg)
}

// ComputeYAML is a kubernetes compute file for the test cluster, as a user would write it: jobs
// go to the real kubelet node (instance type real, the default; pods in the node's network, so
// they reach a server on 127.0.0.1; the hangar binary mounted from supervisorDir), or ask for a
// GPU on the kwok nodes, which have none (instance type gpu: pending with the scheduler's reason).
// extra is appended (more top-level fields).
func ComputeYAML(name, kubeconfig, supervisorDir, extra string) string {
	return fmt.Sprintf(`name: %s
type: kubernetes
kubeconfig: %s
namespace: %s
default_image: %s
host_network: true
supervisor:
  host_path: %s
default_instance_type: real
instance_types:
  real:
    node_selector: {hangar.test/kind: real}
    tolerations: [{key: hangar.test/real, operator: Exists, effect: NoSchedule}]
  gpu:
    node_selector: {hangar.test/kind: kwok}
    requests: {nvidia.com/gpu: 1}
    limits: {nvidia.com/gpu: 1}
%s`, name, yamlString(kubeconfig), Namespace, Image, yamlString(supervisorDir), extra)
}

// Image is the image the test cluster's real kubelet has (Debian's python3, bash, busybox).
const Image = "localhost/hangar-python:latest"

// yamlString quotes s for YAML (a JSON string is one), so a path with odd characters stays a path.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
