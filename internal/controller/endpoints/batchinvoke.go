package endpoints

import (
	"context"
	"maps"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// InvokeBatch queues a batch scoring job, the only way one is made: the deployment req names
// (its endpoint's default when "") run as a parallel job over the input scored, its rows going
// to the output `score`, with req's overrides applied to this job alone (the stored deployment
// is unchanged), submitted by user by (whose access to secrets counts for it).
func (s *Serving) InvokeBatch(ctx context.Context, endpoint, by string, req api.BatchInvokeRequest) (*job.Run, error) {
	e, err := s.BatchEndpoint(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	deployment := req.Deployment
	if deployment == "" {
		if deployment = e.Spec.DefaultDeployment; deployment == "" {
			return nil, invalidf("batch endpoint %s has no deployment yet (batch-deployment create)", endpoint)
		}
	}
	d, err := s.BatchDeployment(ctx, endpoint, deployment)
	if err != nil {
		return nil, err
	}
	if err := s.checkBatchOutputPath(ctx, req.BatchInvocation); err != nil {
		return nil, err
	}
	sp, err := serving.BatchInvokeSpec(d.Spec, d.Spec.Model.Manifest, req.Input, req.BatchInvocation)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	sp.Properties = workspace.StampSubmitter(maps.Clone(sp.Properties), by)
	run, err := s.runs.Create(ctx, api.CreateJobRequest{Spec: sp})
	if err != nil {
		return nil, err
	}
	s.log.Info("batch job queued", "endpoint", endpoint, "deployment", deployment, "run", run.ID)
	return run, nil
}

// checkBatchOutputPath refuses an output path no job output can be written at: only
// workspaceblobstore holds what jobs write (a local_folder datastore is read in place).
func (s *Serving) checkBatchOutputPath(ctx context.Context, inv serving.BatchInvocation) error {
	p, field := inv.OutputPathField()
	if p == "" {
		return nil
	}
	u, err := datastore.ParseURI(p)
	if err != nil {
		return invalidf("%s: %v", field, err)
	}
	ds, err := s.resolve.Datastore(ctx, u.Datastore)
	if err != nil {
		return invalidf("%s: %v", field, err)
	}
	switch {
	case ds.Type != datastore.TypeWorkspace:
		return invalidf("%s: datastore %s is a %s datastore, which jobs read in place; job outputs are written in %s (azureml://datastores/%s/paths/<path>)",
			field, ds.Name, ds.Type, datastore.WorkspaceBlobStore, datastore.WorkspaceBlobStore)
	case u.Path == "":
		return invalidf("%s: %s names no path inside datastore %s; expected azureml://datastores/%s/paths/<path>", field, p, ds.Name, ds.Name)
	}
	return nil
}
