package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/compute"
)

// attachTimeout bounds each check of Attach.
const attachTimeout = 15 * time.Second

// access is what Hangar does in a target's namespace: the verbs it must be allowed.
var access = []struct{ group, resource, verb string }{
	{"batch", "jobs", "create"}, {"batch", "jobs", "get"}, {"batch", "jobs", "list"}, {"batch", "jobs", "watch"},
	{"batch", "jobs", "patch"}, {"batch", "jobs", "delete"}, {"", "pods", "list"}, {"", "pods", "watch"},
	{"", "secrets", "create"}, {"", "services", "create"},
}

// Attach checks a kubernetes target before it is stored: where the supervisor comes from, that
// the kubeconfig and context load, that the API server answers, that the namespace exists and
// that the credentials may do what Hangar does there. Each failure says which.
func (b *Backend) Attach(ctx context.Context, s *compute.Spec) (*compute.NodeInfo, error) {
	k := s.Kubernetes
	if k == nil {
		return nil, fmt.Errorf("compute %s is not a kubernetes target", s.Name)
	}
	if k.Supervisor.Image == "" && k.Supervisor.HostPath == "" {
		return nil, fmt.Errorf("supervisor: required: image (an image holding a static hangar binary at %s) or host_path (a directory of every node holding the hangar binary); see docs/kubernetes.md", imageBinary)
	}
	c, err := connect(*k)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	if _, err := c.cs.Discovery().ServerVersion(); err != nil {
		return nil, fmt.Errorf("the API server at %s does not answer: %w", c.host, err)
	}
	if _, err := c.cs.CoreV1().Namespaces().Get(ctx, k.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("namespace: %q does not exist on %s", k.Namespace, c.host)
	}
	var denied []string
	for _, a := range access {
		r, err := c.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
			Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
				Namespace: k.Namespace, Group: a.group, Resource: a.resource, Verb: a.verb}},
		}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("ask %s what these credentials may do: %w", c.host, err)
		}
		if !r.Status.Allowed {
			res := a.resource
			if a.group != "" {
				res += "." + a.group
			}
			denied = append(denied, a.verb+" "+res)
		}
	}
	if len(denied) > 0 {
		return nil, fmt.Errorf("the credentials of the kubeconfig's context may not %s in namespace %s (Hangar needs them to run jobs there)",
			strings.Join(denied, ", "), k.Namespace)
	}
	return nil, nil
}
