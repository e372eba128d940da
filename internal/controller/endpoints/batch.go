package endpoints

import (
	"cmp"
	"context"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// Batch endpoints (issue 14) are definitions only: invoking one queues a parallel job through
// the normal Create path, tagged with the endpoint and deployment.

// PutBatchEndpoint creates (create) or replaces a batch endpoint.
func (s *Serving) PutBatchEndpoint(ctx context.Context, e serving.BatchEndpoint, create bool) (*store.BatchEndpointRecord, error) {
	if !endpointName.MatchString(e.Name) {
		return nil, invalidf("name: %q must be 3 to 32 letters, digits and '-', starting with a letter", e.Name)
	}
	switch e.AuthMode {
	case "", serving.AuthAADToken:
		e.AuthMode = serving.AuthAADToken
	default:
		return nil, invalidf("auth_mode: %q; a batch endpoint takes aad_token (the workspace token opens it)", e.AuthMode)
	}
	now := s.now()
	rec := store.BatchEndpointRecord{Spec: e, CreatedAt: now, UpdatedAt: now}
	if !create {
		old, err := s.BatchEndpoint(ctx, e.Name)
		if err != nil {
			return nil, err
		}
		rec.CreatedAt = old.CreatedAt
		if e.DefaultDeployment == "" { // a file without defaults keeps the one deployments set
			e.DefaultDeployment = old.Spec.DefaultDeployment
			rec.Spec = e
		}
	}
	if e.DefaultDeployment != "" {
		if _, err := s.BatchDeployment(ctx, e.Name, e.DefaultDeployment); err != nil {
			return nil, invalidf("defaults.deployment_name: %v", err)
		}
	}
	if err := s.store.Serving.PutBatchEndpoint(ctx, rec, create); err != nil {
		return nil, putErr(err, "batch endpoint "+e.Name+" already exists", "no batch endpoint "+e.Name)
	}
	s.log.Info("batch endpoint stored", "endpoint", e.Name)
	return &rec, nil
}

// BatchEndpoint reads one batch endpoint.
func (s *Serving) BatchEndpoint(ctx context.Context, name string) (*store.BatchEndpointRecord, error) {
	e, err := s.store.Serving.BatchEndpoint(ctx, name)
	return e, notFound(err, "no batch endpoint %s", name)
}

// DeleteBatchEndpoint removes a batch endpoint and its deployments; their jobs stay.
func (s *Serving) DeleteBatchEndpoint(ctx context.Context, name string) error {
	if err := s.store.Serving.DeleteBatchEndpoint(ctx, name); err != nil {
		return notFound(err, "no batch endpoint %s", name)
	}
	s.log.Info("batch endpoint deleted", "endpoint", name)
	return nil
}

// PutBatchDeployment checks and stores a batch deployment (create, or replace). The first
// deployment of an endpoint, or one given setDefault, becomes its default, as on Azure.
func (s *Serving) PutBatchDeployment(ctx context.Context, d serving.BatchDeployment, create, setDefault bool) (*store.BatchDeploymentRecord, error) {
	if !deploymentName.MatchString(d.Name) {
		return nil, invalidf("name: %q must be %s", d.Name, deploymentNameRule)
	}
	e, err := s.BatchEndpoint(ctx, d.Endpoint)
	if err != nil {
		return nil, err
	}
	if err := s.checkBatchDeployment(ctx, &d); err != nil {
		return nil, err
	}
	now := s.now()
	rec := store.BatchDeploymentRecord{Spec: d, CreatedAt: now, UpdatedAt: now}
	if err := s.store.Serving.PutBatchDeployment(ctx, rec, create); err != nil {
		return nil, putErr(err, "batch deployment "+d.Name+" of "+d.Endpoint+" already exists",
			"batch endpoint "+d.Endpoint+" has no deployment "+d.Name)
	}
	if setDefault || e.Spec.DefaultDeployment == "" {
		e.Spec.DefaultDeployment = d.Name
		e.UpdatedAt = now
		if err := s.store.Serving.PutBatchEndpoint(ctx, *e, false); err != nil {
			return nil, err
		}
	}
	s.log.Info("batch deployment stored", "endpoint", d.Endpoint, "deployment", d.Name)
	return &rec, nil
}

// checkBatchDeployment resolves what a batch deployment names (model, compute, environment)
// and refuses what its jobs could not run, before anything is stored.
func (s *Serving) checkBatchDeployment(ctx context.Context, d *serving.BatchDeployment) error {
	if d.Compute == "" {
		return invalidf("compute: required (azureml:<cluster>)")
	}
	mv, err := s.resolveModel(ctx, &d.Model)
	if err != nil {
		return err
	}
	if mv != nil {
		d.Model.Name, d.Model.Version, d.Model.Type = mv.Name, mv.Version, mv.Type
	}
	switch {
	case d.ServesMLflowModel() && d.Settings.OutputAction == serving.OutputSummaryOnly:
		return invalidf("settings.output_action: summary_only writes only what a scoring script writes itself, and an mlflow_model without code_configuration has none; use append_row (its predictions go to %s) or give code_configuration",
			cmp.Or(d.Settings.OutputFileName, serving.DefaultOutputFileName))
	case d.ServesMLflowModel():
		// Hangar's built-in MLflow batch scorer is the entry script.
	case d.ScoringScript == "":
		return invalidf("code_configuration.scoring_script: required (a script with init() and run(mini_batch)), unless the model is an mlflow_model (scored by Hangar's built-in MLflow batch scorer)")
	case d.CodeSnapshot == "":
		return invalidf("code_configuration.code: the code folder was not uploaded (use hangar batch-deployment create -f FILE)")
	}
	if d.Model.Manifest == "" {
		return invalidf("model: required (azureml:<name>:<version>, or a path uploaded by hangar batch-deployment create -f FILE)")
	}
	if err := checkModelFolder(d.Model.Folder); err != nil {
		return err
	}
	target, err := s.resolve.ResolveCompute(ctx, d.Compute)
	if err != nil {
		return err
	}
	d.Compute = target.Name
	if d.InstanceCount < 1 {
		d.InstanceCount = 1
	}
	// Checked as the job an invoke makes, with a stand-in input.
	sp := serving.BatchJobSpec(*d, d.Model.Manifest, job.Input{Type: job.URIFolder, Path: "azureml://datastores/workspaceblobstore/paths/x"})
	if _, err := s.resolve.ResolveEnvironment(ctx, &sp); err != nil {
		return err
	}
	d.Environment = sp.Environment
	if _, err := s.resolve.CheckForTarget(sp, target); err != nil {
		return err
	}
	return nil
}

// BatchDeployment reads one batch deployment.
func (s *Serving) BatchDeployment(ctx context.Context, endpoint, name string) (*store.BatchDeploymentRecord, error) {
	d, err := s.store.Serving.BatchDeployment(ctx, endpoint, name)
	return d, notFound(err, "batch endpoint %s has no deployment %s", endpoint, name)
}

// BatchDeployments lists a batch endpoint's deployments.
func (s *Serving) BatchDeployments(ctx context.Context, endpoint string) ([]store.BatchDeploymentRecord, error) {
	if _, err := s.BatchEndpoint(ctx, endpoint); err != nil {
		return nil, err
	}
	return s.store.Serving.BatchDeployments(ctx, endpoint)
}

// DeleteBatchDeployment removes a batch deployment that is not its endpoint's default.
func (s *Serving) DeleteBatchDeployment(ctx context.Context, endpoint, name string) error {
	e, err := s.BatchEndpoint(ctx, endpoint)
	if err != nil {
		return err
	}
	if e.Spec.DefaultDeployment == name {
		return conflictf("deployment %s is batch endpoint %s's default; make another the default first (batch-deployment create --set-default) or delete the endpoint", name, endpoint)
	}
	if err := s.store.Serving.DeleteBatchDeployment(ctx, endpoint, name); err != nil {
		return notFound(err, "batch endpoint %s has no deployment %s", endpoint, name)
	}
	s.log.Info("batch deployment deleted", "endpoint", endpoint, "deployment", name)
	return nil
}
