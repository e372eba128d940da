package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/spec"
)

// deploymentFlags are the flags create and update share, for online and batch deployments.
type deploymentFlags struct {
	file, name, endpoint, root string
	sets                       []string
}

func (f *deploymentFlags) add(cmd *cobra.Command, fileHelp string) {
	cmd.Flags().StringVarP(&f.file, "file", "f", "", fileHelp)
	cmd.Flags().StringVarP(&f.name, "name", "n", "", "name (default: from the file)")
	cmd.Flags().StringVarP(&f.endpoint, "endpoint-name", "e", "", "endpoint (default: endpoint_name in the file)")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	addSpecRootFlag(cmd, &f.root)
}

// deploymentSource reads a deployment of one kind (D: serving.Deployment, serving.BatchDeployment)
// from its file, uploading its code and model, or, for an update without a file, from its stored
// definition with --set applied.
type deploymentSource[D any] struct {
	parse  func(file string, sets []string, opts ...spec.FileOption) (*D, []string, error)
	target func(*D) (name, endpoint *string)
	upload func(ctx context.Context, env *Env, c *api.Client, d *D) error
	get    func(ctx context.Context, c *api.Client, endpoint, name string) (*D, error)
	kind   storedKind
	// setsRequired: an update without a file must change something.
	setsRequired bool
}

var onlineDeploymentSource = deploymentSource[serving.Deployment]{
	parse:  spec.ParseDeploymentFile,
	target: func(d *serving.Deployment) (*string, *string) { return &d.Name, &d.Endpoint },
	upload: uploadDeployment,
	get: func(ctx context.Context, c *api.Client, endpoint, name string) (*serving.Deployment, error) {
		v, err := c.Deployments.Get(ctx, endpoint, name)
		if err != nil {
			return nil, err
		}
		return &v.Deployment, nil
	},
	kind: onlineDeploymentKind, setsRequired: true,
}

var batchDeploymentSource = deploymentSource[serving.BatchDeployment]{
	parse:  spec.ParseBatchDeploymentFile,
	target: func(d *serving.BatchDeployment) (*string, *string) { return &d.Name, &d.Endpoint },
	upload: uploadBatchDeployment,
	get: func(ctx context.Context, c *api.Client, endpoint, name string) (*serving.BatchDeployment, error) {
		v, err := c.BatchDeployments.Get(ctx, endpoint, name)
		if err != nil {
			return nil, err
		}
		return &v.BatchDeployment, nil
	},
	kind: batchDeploymentKind,
}

// read is what a create or update sends: the file's deployment, else the stored one with --set.
func (s deploymentSource[D]) read(ctx context.Context, env *Env, c *api.Client, f deploymentFlags) (*D, error) {
	if f.file == "" {
		return s.stored(ctx, c, f.endpoint, f.name, f.sets)
	}
	return s.fromFile(ctx, env, c, f)
}

// fromFile reads a deployment's file and uploads its code and model.
func (s deploymentSource[D]) fromFile(ctx context.Context, env *Env, c *api.Client, f deploymentFlags) (*D, error) {
	d, warnings, err := s.parse(f.file, f.sets, specFiles(f.root)...)
	if err != nil {
		return nil, specError(err)
	}
	env.warn(warnings)
	name, endpoint := s.target(d)
	if f.name != "" {
		*name = f.name
	}
	if f.endpoint != "" {
		*endpoint = f.endpoint
	}
	if *endpoint == "" {
		return nil, usageError("%s: endpoint_name: required (or --endpoint-name)", f.file)
	}
	if err := s.upload(ctx, env, c, d); err != nil {
		return nil, err
	}
	return d, nil
}

// stored is the stored deployment with sets applied (an update without a file).
func (s deploymentSource[D]) stored(ctx context.Context, c *api.Client, endpoint, name string, sets []string) (*D, error) {
	if name == "" || endpoint == "" || (s.setsRequired && len(sets) == 0) {
		return nil, usageError("give --file (-f), or --name, --endpoint-name and the fields to change with --set key=value")
	}
	d, err := s.get(ctx, c, endpoint, name)
	if err != nil {
		return nil, err
	}
	if err := applyStoredSets(d, sets, s.kind); err != nil {
		return nil, err
	}
	return d, nil
}

// addDeploymentTarget adds the required -n (the deployment) and -e (its endpoint) of a verb on
// one deployment.
func addDeploymentTarget(cmd *cobra.Command, name, endpoint *string, endpointHelp string) {
	addNameTarget(cmd, name, "deployment name")
	addEndpointTarget(cmd, endpoint, endpointHelp)
}

// addNameTarget adds the required -n of a verb on one endpoint or deployment.
func addNameTarget(cmd *cobra.Command, name *string, help string) {
	cmd.Flags().StringVarP(name, "name", "n", "", help)
	_ = cmd.MarkFlagRequired("name")
}

// addEndpointTarget adds the required -e of a verb on an endpoint's deployments.
func addEndpointTarget(cmd *cobra.Command, endpoint *string, help string) {
	cmd.Flags().StringVarP(endpoint, "endpoint-name", "e", "", help)
	_ = cmd.MarkFlagRequired("endpoint-name")
}
