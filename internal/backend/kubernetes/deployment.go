package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/tokens"
)

// An online deployment's replica runs on a Kubernetes target are realised by one apps/v1
// Deployment and one Service (design 0014): a replica stays a run (its own token, logs, status
// and record; the serving controller decides how many there are), and the Deployment's
// replicas is the number of the online deployment's live replica runs. Its pods are identical,
// so each pod claims one of those runs (claim.go) and then supervises it as a Job's pod would.
//
// The Deployment's annotation AnnotationReplicaRuns is the authority on which runs it holds and
// which pod claimed each: every change to it is an update under its resourceVersion, so two
// pods never take one run and two submissions never lose each other's run.
const (
	// LabelServing names the Deployment a pod, Service or Secret belongs to (the selector).
	LabelServing = "hangar.dev/serving"
	// LabelEndpoint and LabelDeployment name the online endpoint and deployment (label values).
	LabelEndpoint   = "hangar.dev/endpoint"
	LabelDeployment = "hangar.dev/deployment"
	// AnnotationReplicaRuns is the Deployment's set of replica runs (JSON, replicaSet.Runs) and
	// AnnotationCanceledRuns the runs Hangar canceled, so that Status still says so.
	AnnotationReplicaRuns  = "hangar.dev/replica-runs"
	AnnotationCanceledRuns = "hangar.dev/canceled-runs"
	// AnnotationTemplate is the hash of the pod template a run was submitted with: a pod claims
	// only runs of its own template (a rollout's old and new pods run different specs).
	AnnotationTemplate = "hangar.dev/template"
	// AnnotationDeletionCost is Kubernetes' hint of which pod a ReplicaSet removes first.
	AnnotationDeletionCost = "controller.kubernetes.io/pod-deletion-cost"
	claimedCost            = "100"
	canceledCost           = "-1000000"
	// DefaultServePort is the port a scoring replica listens on in its pod when its deployment
	// names none: a Service needs one port for all pods.
	DefaultServePort = 5000
	// claimKey and templateKey are the Deployment's Secret's entries: the claim file the pods
	// mount (server URL and claim token), and the supervisor config every claimed run starts
	// from (never mounted).
	claimKey    = "claim.json"
	templateKey = "template.json"
	// keepCanceled bounds the canceled runs remembered (the oldest are forgotten).
	keepCanceled = 200
)

// replicaEntry is one run of a Deployment's set.
type replicaEntry struct {
	// Seq orders the runs by submission: the oldest unclaimed run is claimed first.
	Seq      int    `json:"seq"`
	Template string `json:"template"`
	// Pod and PodUID are the pod that claimed the run ("" while none has).
	Pod    string `json:"pod,omitempty"`
	PodUID string `json:"pod_uid,omitempty"`
}

// replicaSet is what a Deployment's annotations say of its runs.
type replicaSet struct {
	Runs     map[string]replicaEntry
	Canceled map[string]canceledEntry
}

// canceledEntry is a run Hangar canceled: when, and the pod that ran it (which the ReplicaSet
// removes).
type canceledEntry struct {
	At  string `json:"at"` // RFC 3339
	Pod string `json:"pod,omitempty"`
}

func readSet(d *appsv1.Deployment) (replicaSet, error) {
	s := replicaSet{Runs: map[string]replicaEntry{}, Canceled: map[string]canceledEntry{}}
	if v := d.Annotations[AnnotationReplicaRuns]; v != "" {
		if err := json.Unmarshal([]byte(v), &s.Runs); err != nil {
			return s, fmt.Errorf("annotation %s of Deployment %s: %w", AnnotationReplicaRuns, d.Name, err)
		}
	}
	if v := d.Annotations[AnnotationCanceledRuns]; v != "" {
		if err := json.Unmarshal([]byte(v), &s.Canceled); err != nil {
			return s, fmt.Errorf("annotation %s of Deployment %s: %w", AnnotationCanceledRuns, d.Name, err)
		}
	}
	return s, nil
}

// write puts the set into d's annotations and sets d's replicas to its size.
func (s replicaSet) write(d *appsv1.Deployment) {
	if len(s.Canceled) > keepCanceled {
		ids := slices.SortedFunc(maps.Keys(s.Canceled), func(a, b string) int { return strings.Compare(s.Canceled[a].At, s.Canceled[b].At) })
		for _, id := range ids[:len(ids)-keepCanceled] {
			delete(s.Canceled, id)
		}
	}
	runs, _ := json.Marshal(s.Runs)
	canceled, _ := json.Marshal(s.Canceled)
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[AnnotationReplicaRuns] = string(runs)
	d.Annotations[AnnotationCanceledRuns] = string(canceled)
	d.Spec.Replicas = new(int32(len(s.Runs)))
}

func (s replicaSet) nextSeq() int {
	n := 0
	for _, e := range s.Runs {
		n = max(n, e.Seq)
	}
	return n + 1
}

// DeploymentName is the name of the Deployment (and of its Service and Secret) of an online
// deployment of a workspace: readable, with a hash of all three so that two never share it, and
// short enough that its pods' names stay DNS labels.
func DeploymentName(workspace, endpoint, deployment string) string {
	h := shortHash(workspace + "\x00" + endpoint + "\x00" + deployment)
	base := dnsLabel(endpoint + "-" + deployment)
	const budget = 47 - len("hangar-s-") - 9
	base = strings.Trim(base[:min(len(base), budget)], "-")
	return "hangar-s-" + base + "-" + h
}

// byDeployment says whether l is a replica run this backend realises with a Deployment: every
// replica, when claim tokens can be minted (without a claim key, in tests, a replica is a Job).
func (b *Backend) byDeployment(l backend.Launch) bool {
	return len(b.ClaimKey) > 0 && l.Spec.Serve != nil
}

// ServingObjects are an online deployment's objects in a cluster.
type ServingObjects struct {
	Deployment *appsv1.Deployment
	Service    *corev1.Service
	Secret     *corev1.Secret // without the claim token: it names the Deployment's UID
}

// BuildServing makes the objects of the online deployment r's run is a replica of. The
// Deployment starts at 0 replicas with no runs; Submit adds them.
func BuildServing(r Run) (ServingObjects, error) {
	sv := r.Spec.Serve
	name := DeploymentName(r.Workspace, sv.Endpoint, sv.Deployment)
	image, it, err := podPlacement(r)
	if err != nil {
		return ServingObjects{}, err
	}
	port := servePort(r)
	base := api.SupervisorConfig{ServerURL: r.ServerURL, ServerCA: r.ServerCA, CacheDir: path.Join(cacheDir, "blobs"), InImage: image, Pod: true,
		ServePort: port}
	if servesByEntrypoint(r) {
		base.ServeGate, base.ServeModel = serveGate, serveModel(r)
	}
	tmpl, err := json.MarshalIndent(base, "", "  ")
	if err != nil {
		return ServingObjects{}, err
	}
	labels := servingLabels(r, name)
	pod := replicaPod(r, name, image, it, port)
	meta := podMeta(r)
	delete(meta.Labels, LabelRun)
	delete(meta.Annotations, AnnotationRunID)
	maps.Copy(meta.Labels, labels)
	hash := templateHash(pod, meta)
	meta.Annotations[AnnotationTemplate] = hash
	om := metav1.ObjectMeta{Name: name, Namespace: r.Target.Namespace, Labels: labels}
	o := ServingObjects{
		Deployment: &appsv1.Deployment{ObjectMeta: *om.DeepCopy(), Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelServing: name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: meta, Spec: pod},
		}},
		Service: &corev1.Service{ObjectMeta: *om.DeepCopy(), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{LabelServing: name},
			Ports: []corev1.ServicePort{{Name: "score", Port: int32(port), TargetPort: intstr.FromString("score"), Protocol: corev1.ProtocolTCP}},
		}},
		Secret: &corev1.Secret{ObjectMeta: *om.DeepCopy(), Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{templateKey: tmpl}},
	}
	o.Deployment.Annotations = map[string]string{AnnotationTemplate: hash}
	return o, nil
}

func servingLabels(r Run, name string) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedBy, LabelServing: name,
		LabelEndpoint: RunLabel(r.Spec.Serve.Endpoint), LabelDeployment: RunLabel(r.Spec.Serve.Deployment)}
	if r.Workspace != "" {
		l[LabelWorkspace] = r.Workspace
	}
	return l
}

// servePort is the replicas' port: the deployment's, else DefaultServePort in a pod network of
// its own; on the host's network, where the port is the node's, one taken from the Deployment's
// name among hostPortBase..+hostPortSpan (below Linux's ephemeral ports), so that two online
// deployments seldom want one port of a node.
func servePort(r Run) int {
	if p := r.Spec.Serve.Port; p > 0 {
		return p
	}
	if r.Target.HostNetwork {
		name := DeploymentName(r.Workspace, r.Spec.Serve.Endpoint, r.Spec.Serve.Deployment)
		return hostPortBase + int(crc32.ChecksumIEEE([]byte(name))%hostPortSpan)
	}
	return DefaultServePort
}

const (
	hostPortBase = 20000
	hostPortSpan = 10000
)

// replicaPod is a Job pod's spec made a Deployment's: restarted in place, the supervisor config
// is the claim file (the run comes from the claim), the scoring port declared and probed on the
// container that serves (the supervisor's, or the image's beside it). On the host's network the
// port is also the pod's hostPort: the scheduler then keeps two replicas of one port apart, as it
// would two pods of one Job.
func replicaPod(r Run, name, image string, it compute.InstanceType, port int) corev1.PodSpec {
	spec := podSpec(r, name, 1, image, it)
	spec.RestartPolicy = corev1.RestartPolicyAlways
	for i, v := range spec.Volumes {
		if v.Name == "config" {
			spec.Volumes[i].Secret.Items = []corev1.KeyToPath{{Key: claimKey, Path: "supervisor.json"}}
		}
	}
	sup := &spec.Containers[0]
	sup.Command = []string{path.Join(binDir, "hangar"), "pod-entry", "--config", path.Join(configDir, "supervisor.json")}
	sup.Env = append(sup.Env, corev1.EnvVar{Name: "HANGAR_POD_NAME", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	cp := corev1.ContainerPort{Name: "score", ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}
	if r.Target.HostNetwork {
		cp.HostPort = cp.ContainerPort
	}
	if servesByEntrypoint(r) {
		withSidecar(&spec, r, image, it, cp)
	} else {
		sup.Ports = []corev1.ContainerPort{cp}
	}
	c := &spec.Containers[0]
	probe := r.Spec.Serve.Probe
	if probe == "" {
		probe = "/"
	}
	get := corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: probe, Port: intstr.FromString("score")}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: get, PeriodSeconds: 2, FailureThreshold: 2}
	// The model may take long to fetch and load: liveness counts only once the replica is up.
	c.StartupProbe = &corev1.Probe{ProbeHandler: get, PeriodSeconds: 2, FailureThreshold: 900}
	c.LivenessProbe = &corev1.Probe{ProbeHandler: get, PeriodSeconds: 10, FailureThreshold: 3, TimeoutSeconds: 5}
	return spec
}

func templateHash(spec corev1.PodSpec, meta metav1.ObjectMeta) string {
	data, _ := json.Marshal(struct {
		M metav1.ObjectMeta
		S corev1.PodSpec
	}{meta, spec})
	return shortHash(string(data))
}

// submitReplica adds the run to its online deployment's Deployment (created with its Service
// and Secret when missing), whose replicas becomes the size of its set of runs. Called again
// for the same run it changes nothing. Runs whose claimed pod is gone or took another run leave
// the set first (they ended; their status says so).
func (b *Backend) submitReplica(ctx context.Context, c *client, l backend.Launch, r Run) (backend.Handle, error) {
	objs, err := BuildServing(r)
	if err != nil {
		return nil, err
	}
	d, err := b.ensureServing(ctx, c, objs, l.Target.Name)
	if err != nil {
		return nil, fmt.Errorf("submit replica run %s: %w", l.RunID, err)
	}
	name, ns := d.Name, d.Namespace
	deps := c.cs.AppsV1().Deployments(ns)
	err = onConflict(func() error {
		cur, err := deps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != d.UID {
			return fmt.Errorf("the Deployment %s was replaced while run %s was added", d.Name, l.RunID)
		}
		set, err := readSet(cur)
		if err != nil {
			return err
		}
		if _, ok := set.Runs[l.RunID]; ok {
			d = cur
			return nil
		}
		if err := c.pruneGone(ctx, cur.Namespace, &set); err != nil {
			return err
		}
		hash := objs.Deployment.Annotations[AnnotationTemplate]
		set.Runs[l.RunID] = replicaEntry{Seq: set.nextSeq(), Template: hash}
		if cur.Annotations[AnnotationTemplate] != hash { // the online deployment changed: a rollout
			cur.Spec.Template = objs.Deployment.Spec.Template
			cur.Annotations[AnnotationTemplate] = hash
		}
		set.write(cur)
		updated, err := deps.Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			d = updated
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("add replica run %s to the Deployment %s: %w", l.RunID, objs.Deployment.Name, err)
	}
	c.watch(d.Namespace)
	b.Log.Info("submitted replica to a kubernetes Deployment", "run", l.RunID, "target", l.Target.Name,
		"namespace", d.Namespace, "deployment", d.Name, "replicas", *d.Spec.Replicas)
	return json.Marshal(handle{Target: l.Target.Name, Namespace: d.Namespace, Deployment: d.Name, Run: l.RunID, UID: string(d.UID)})
}

// ensureServing creates the Deployment, then its Secret (with the claim token, which names the
// Deployment's UID) and Service, owned by it; what exists is kept, except a Secret or Service
// left by an earlier Deployment of the same name (deleted without its dependents, or not yet
// collected), which is made this one's. A Deployment being deleted (idle.go) is waited for.
func (b *Backend) ensureServing(ctx context.Context, c *client, o ServingObjects, target string) (*appsv1.Deployment, error) {
	d, err := c.createDeployment(ctx, o.Deployment)
	if err != nil {
		return nil, err
	}
	ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, BlockOwnerDeletion: new(true)}
	cc := claimConfigOf(o.Secret)
	cc.Token = tokens.Claim{Key: b.ClaimKey}.Mint(tokens.ClaimScope{Target: target, Namespace: d.Namespace, Deployment: d.Name, UID: string(d.UID)})
	claim, _ := json.Marshal(claimFile{Claim: &cc})
	o.Secret.Data[claimKey] = claim
	o.Secret.OwnerReferences = []metav1.OwnerReference{ref}
	o.Service.OwnerReferences = []metav1.OwnerReference{ref}
	secrets, services := c.cs.CoreV1().Secrets(d.Namespace), c.cs.CoreV1().Services(d.Namespace)
	if _, err := secrets.Create(ctx, o.Secret, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		err = onConflict(func() error {
			cur, err := secrets.Get(ctx, o.Secret.Name, metav1.GetOptions{})
			if err != nil || ownedBy(cur.OwnerReferences, d.UID) {
				return err
			}
			cur.OwnerReferences, cur.Data, cur.Labels = o.Secret.OwnerReferences, o.Secret.Data, o.Secret.Labels
			_, err = secrets.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("take over the Secret of Deployment %s: %w", d.Name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("create the Secret of Deployment %s: %w", d.Name, err)
	}
	if _, err := services.Create(ctx, o.Service, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		err = onConflict(func() error {
			cur, err := services.Get(ctx, o.Service.Name, metav1.GetOptions{})
			if err != nil || ownedBy(cur.OwnerReferences, d.UID) {
				return err
			}
			cur.OwnerReferences, cur.Labels = o.Service.OwnerReferences, o.Service.Labels
			cur.Spec.Selector, cur.Spec.Ports = o.Service.Spec.Selector, o.Service.Spec.Ports
			_, err = services.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("take over the Service of Deployment %s: %w", d.Name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("create the Service of Deployment %s: %w", d.Name, err)
	}
	return d, nil
}

// deletionWait bounds how long a replica waits for its online deployment's Deployment to finish
// being deleted before making it again.
const deletionWait = 90 * time.Second

// createDeployment creates the Deployment, or reads the one of that name of this workspace;
// one being deleted is waited for, then made anew.
func (c *client) createDeployment(ctx context.Context, want *appsv1.Deployment) (*appsv1.Deployment, error) {
	deps := c.cs.AppsV1().Deployments(want.Namespace)
	deadline := time.Now().Add(deletionWait)
	for {
		d, err := deps.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			d, err = deps.Get(ctx, want.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && time.Now().Before(deadline) {
				continue // deleted between the two
			}
			if err == nil && d.Labels[LabelWorkspace] != want.Labels[LabelWorkspace] {
				return nil, fmt.Errorf("a Deployment named %s in namespace %s belongs to workspace %q, not to this one (%q)",
					d.Name, d.Namespace, d.Labels[LabelWorkspace], want.Labels[LabelWorkspace])
			}
			if err == nil && d.DeletionTimestamp != nil {
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("the Deployment %s is being deleted (waited %s)", d.Name, deletionWait)
				}
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("the Deployment %s is being deleted: %w", d.Name, ctx.Err())
				case <-time.After(time.Second):
				}
				continue
			}
		}
		if err != nil {
			return nil, fmt.Errorf("create the Deployment %s: %w", want.Name, err)
		}
		return d, nil
	}
}

// ownedBy reports whether refs name the owner uid.
func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
}

// claimFile is what a Deployment's pods get as their supervisor config: not a run's config but
// how to claim one (supervisor.ClaimConfig reads it).
type claimFile struct {
	Claim *ClaimConfig `json:"claim"`
}

// ClaimConfig is the claim part of a Deployment pod's config.
type ClaimConfig struct {
	ServerURL string `json:"server_url"`
	Token     string `json:"token"`
	ServerCA  string `json:"server_ca,omitempty"`
}

// claimConfigOf is the claim file's server part, from the Secret's template config.
func claimConfigOf(s *corev1.Secret) ClaimConfig {
	var cfg api.SupervisorConfig
	_ = json.Unmarshal(s.Data[templateKey], &cfg)
	return ClaimConfig{ServerURL: cfg.ServerURL, ServerCA: cfg.ServerCA}
}

// pruneGone drops from set the runs whose claimed pod is gone, being deleted, or now holds
// another run: such a run has ended or is ending (Status reports it lost), and its place goes to
// the run that replaces it (a pod that takes its grace period to stop would otherwise count
// twice, and the Deployment would keep an idle pod beside the replacement).
func (c *client) pruneGone(ctx context.Context, ns string, set *replicaSet) error {
	for id, e := range set.Runs {
		if e.Pod == "" {
			continue
		}
		p, err := c.cs.CoreV1().Pods(ns).Get(ctx, e.Pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			delete(set.Runs, id)
		case err != nil:
			return fmt.Errorf("read pod %s: %w", e.Pod, err)
		case string(p.UID) != e.PodUID || p.Annotations[AnnotationRunID] != id || p.DeletionTimestamp != nil:
			delete(set.Runs, id)
		}
	}
	return nil
}

// replicaCount is "replicas N, ready M" of a Deployment, for reasons.
func replicaCount(d *appsv1.Deployment) string {
	want := int32(0)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return "replicas " + strconv.Itoa(int(want)) + ", ready " + strconv.Itoa(int(d.Status.ReadyReplicas))
}
