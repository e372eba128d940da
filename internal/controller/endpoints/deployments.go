package endpoints

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// Provisioning states of a deployment, in Azure's words.
const (
	DeploymentCreating  = "Creating"
	DeploymentUpdating  = "Updating"
	DeploymentSucceeded = "Succeeded"
	DeploymentFailed    = "Failed"
)

// CreateDeployment stores a new deployment of an endpoint; the serving loop starts its replicas.
// With allTraffic the endpoint sends it every request once it is stored.
func (s *Serving) CreateDeployment(ctx context.Context, d serving.Deployment, allTraffic bool) (*store.DeploymentRecord, error) {
	return s.putDeployment(ctx, d, 0, true, allTraffic)
}

// UpdateDeployment replaces a deployment's definition: its replicas are replaced by new ones,
// the old ones stopping once the new ones are ready.
func (s *Serving) UpdateDeployment(ctx context.Context, d serving.Deployment) (*store.DeploymentRecord, error) {
	return s.putDeployment(ctx, d, 0, false, false)
}

// putDeployment stores a deployment; an update given gen replaces only that generation.
func (s *Serving) putDeployment(ctx context.Context, d serving.Deployment, gen int, create, allTraffic bool) (*store.DeploymentRecord, error) {
	if !deploymentName.MatchString(d.Name) {
		return nil, invalidf("name: %q must be %s", d.Name, deploymentNameRule)
	}
	e, err := s.endpoint(ctx, d.Endpoint)
	if err != nil {
		return nil, err
	}
	d.Normalize()
	if err := s.checkDeployment(ctx, &d, e.Spec); err != nil {
		return nil, err
	}
	now := s.now()
	state := DeploymentCreating
	if !create {
		state = DeploymentUpdating
	}
	rec, err := s.store.Serving.PutDeployment(ctx, store.DeploymentRecord{Spec: d, Generation: gen, State: state, Reason: "starting replicas",
		CreatedAt: now, UpdatedAt: now}, create)
	if err != nil {
		return nil, putErr(err, "deployment "+d.Name+" of endpoint "+d.Endpoint+" already exists; use online-deployment update",
			"endpoint "+d.Endpoint+" has no deployment "+d.Name)
	}
	s.log.Info("deployment stored", "endpoint", d.Endpoint, "deployment", d.Name, "generation", rec.Generation)
	if allTraffic {
		e.Spec.Traffic = map[string]int{d.Name: 100}
		if _, err := s.UpdateEndpoint(ctx, e.Spec); err != nil {
			return nil, err
		}
	}
	s.Wake()
	return rec, nil
}

// checkDeployment resolves what a deployment names (its model, environment and target) and
// refuses what its replicas could not run, before anything is stored.
func (s *Serving) checkDeployment(ctx context.Context, d *serving.Deployment, e serving.Endpoint) error {
	if d.ScoringScript != "" && d.CodeSnapshot == "" {
		return invalidf("code_configuration.code: the code folder was not uploaded (use hangar online-deployment create -f FILE)")
	}
	mv, err := s.resolveModel(ctx, &d.Model)
	if err != nil {
		return err
	}
	if mv != nil { // where an image that serves by its entrypoint finds it, as on Azure
		d.Model.Name, d.Model.Version, d.Model.Type = mv.Name, mv.Version, mv.Type
	}
	if d.ScoringScript == "" && d.Command == "" && d.Inference == nil && !d.ServesMLflowModel() {
		return invalidf("code_configuration: required (a scoring script with init() and run()), unless the deployment gives a command that serves on $PORT or an environment image with an inference_config whose entrypoint serves, or its model is an mlflow_model (served by Hangar's built-in MLflow scorer)")
	}
	if d.ServesMLflowModel() && d.Model.Manifest == "" && d.Model.Path == "" {
		return invalidf("model: a deployment without code_configuration serves its mlflow_model's files; give the model")
	}
	if err := checkModelFolder(d.Model.Folder); err != nil {
		return err
	}
	if d.Model.Path != "" && d.Model.Manifest == "" {
		return invalidf("model.path: the model's files were not uploaded (use hangar online-deployment create -f FILE)")
	}
	if d.Compute == "" {
		d.Compute = e.Compute
	}
	target, err := s.resolve.ResolveCompute(ctx, d.Compute)
	if err != nil {
		return err
	}
	d.Compute = target.Name
	sp := serving.ReplicaSpec(*d, target.Name, d.Model.Manifest)
	if _, err := s.resolve.ResolveEnvironment(ctx, &sp); err != nil {
		return err
	}
	d.Environment = sp.Environment
	if d.ServesByEntrypoint() && d.Environment.Image == "" {
		return invalidf("environment.image: required for a deployment that serves by its image's entrypoint (inference_config, no code_configuration, no command)")
	}
	if _, err := s.resolve.CheckForTarget(sp, target); err != nil {
		return err
	}
	// The replicas' secrets: refused now for a creator who may not use one, rather than at
	// each replica's start.
	return s.resolve.CheckSecretRefs(ctx, d.Properties[workspace.PropSubmitter], &sp) // jobsecrets.go
}

// DeleteDeployment removes a deployment that takes no traffic; its replicas stop.
func (s *Serving) DeleteDeployment(ctx context.Context, endpoint, name string) error {
	e, err := s.endpoint(ctx, endpoint)
	if err != nil {
		return err
	}
	if e.Spec.Traffic[name] > 0 || e.Spec.MirrorTraffic[name] > 0 {
		return conflictf("deployment %s takes %d%% of endpoint %s's traffic (%d%% mirrored); move its traffic first (online-endpoint update --traffic)",
			name, e.Spec.Traffic[name], endpoint, e.Spec.MirrorTraffic[name])
	}
	if err := s.store.Serving.DeleteDeployment(ctx, endpoint, name); err != nil {
		return notFound(err, "endpoint %s has no deployment %s", endpoint, name)
	}
	s.log.Info("deployment deleted", "endpoint", endpoint, "deployment", name)
	s.Wake()
	return nil
}

// Deployment reads one deployment.
func (s *Serving) Deployment(ctx context.Context, endpoint, name string) (*store.DeploymentRecord, error) {
	d, err := s.store.Serving.Deployment(ctx, endpoint, name)
	return d, notFound(err, "endpoint %s has no deployment %s", endpoint, name)
}

// ReplicaRuns are a deployment's replicas with their runs, oldest first.
func (s *Serving) ReplicaRuns(ctx context.Context, endpoint, name string) ([]store.Replica, []*job.Run, error) {
	all, err := s.store.Serving.Replicas(ctx)
	if err != nil {
		return nil, nil, err
	}
	var reps []store.Replica
	var runs []*job.Run
	for _, r := range all {
		if r.Endpoint != endpoint || r.Deployment != name {
			continue
		}
		run, err := s.store.Runs.Run(ctx, r.RunID)
		if err != nil {
			continue
		}
		reps, runs = append(reps, r), append(runs, run)
	}
	return reps, runs, nil
}

// resolveModel sets a deployment's model files from the registered version it names (Ref),
// returning that version; nil for an inline model.
func (s *Serving) resolveModel(ctx context.Context, m *serving.ModelRef) (*model.Version, error) {
	if m.Ref == "" {
		return nil, nil
	}
	mv, err := s.resolve.ResolveModel(ctx, m.Ref)
	var we *workspace.Error
	if errors.As(err, &we) {
		return nil, &workspace.Error{Kind: we.Kind, Msg: "model: " + we.Msg}
	}
	if err != nil {
		return nil, err
	}
	// The version is recorded: one named by alias (name@champion) rolls when the alias moves
	// (alias.go).
	m.Manifest, m.Folder, m.Name, m.Version = mv.Manifest, mv.Folder, mv.Name, mv.Version
	return mv, nil
}

// checkModelFolder refuses a model folder that is not one folder's name ("" is none).
func checkModelFolder(f string) error {
	if f != "" && (f != path.Base(f) || f == "." || f == ".." || strings.ContainsAny(f, "/\\\x00")) {
		return invalidf("model.folder: %q is not a folder name", f)
	}
	return nil
}
