package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/spec"
)

func newJobCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "job",
		Short:   "Create, follow and inspect jobs",
		Example: "  hangar job create -f job.yml --stream\n  hangar job list\n  hangar job show NAME",
	}
	cmd.AddCommand(newJobCreateCmd(env), newJobListCmd(env), newJobShowCmd(env), newJobStreamCmd(env),
		newJobCancelCmd(env), newJobDownloadCmd(env), newJobMetricsCmd(env), newJobCompareCmd(env),
		newJobArchiveCmd(env, true), newJobArchiveCmd(env, false), newJobDeleteCmd(env))
	return groupCmd(cmd)
}

type createFlags struct {
	file   string
	sets   []string
	root   string // --spec-root
	name   string
	stream bool
	raw    bool // --raw: the streamed log byte for byte on a terminal too
	dryRun bool
}

func newJobCreateCmd(env *Env) *cobra.Command {
	var f createFlags
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Submit a job from a YAML spec",
		Long: `Submit a command, parallel, sweep or pipeline job described by an Azure ML CLI v2 compatible
YAML file (automl and spark jobs are refused). The code folder and local inputs are uploaded
first, every pipeline step's too; only files the workspace does not have yet are sent. A sweep job runs its trials as command jobs
of their own; job show lists them with their parameters and metric, and the best one.`,
		Example: `  hangar job create -f job.yml
  hangar job create -f sweep.yml --set limits.max_total_trials=40
  hangar job create -f job.yml --stream
  hangar job create -f job.yml --set inputs.epochs=20 --set compute=local --name my-run -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return env.createJob(cmd.Context(), f) },
	}
	cmd.Flags().StringVarP(&f.file, "file", "f", "", "job YAML file")
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a field: --set key.path=value (repeatable)")
	addSpecRootFlag(cmd, &f.root)
	cmd.Flags().StringVarP(&f.name, "name", "n", "", "job name (default: from the file, else generated)")
	cmd.Flags().BoolVar(&f.stream, "stream", false, "follow the job's log until it ends; exit non-zero unless it Completed")
	addRawFlag(cmd, &f.raw)
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print, per node, the processes and variables Hangar would start; create nothing")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func (e *Env) createJob(ctx context.Context, f createFlags) error {
	sp, warnings, err := spec.ParseJobFile(f.file, f.sets, specFiles(f.root)...)
	if err != nil {
		return specError(err)
	}
	if f.name != "" {
		sp.Name = f.name
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	if f.dryRun && sp.Pipeline != nil {
		return e.dryRunPipeline(sp.Pipeline)
	}
	if f.dryRun {
		return e.dryRun(ctx, sp)
	}
	c, err := e.client(ctx)
	if err != nil {
		return err
	}
	if sp.Compute != "" && sp.Compute != compute.ServerlessName { // the server says how to set up serverless
		if _, err := c.Computes.Brief(ctx, sp.Compute); api.IsNotFound(err) {
			return fmt.Errorf("%s: compute: no compute target named %q in this workspace (see hangar compute list)", f.file, sp.Compute)
		} else if err != nil {
			return err
		}
	}
	if err := e.uploadJob(ctx, c, sp); err != nil {
		return err
	}
	d, err := c.Jobs.Create(ctx, api.CreateJobRequest{Spec: *sp, Warnings: warnings})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code == api.CodeInvalid {
			return fmt.Errorf("%s: %s", f.file, ae.Message)
		}
		return err
	}
	if f.stream {
		if e.Output != "table" {
			if err := e.printData(d, nil); err != nil {
				return err
			}
		}
		fmt.Fprintf(e.Stderr, "Created job %s on compute %s\n", d.ID, d.Compute)
		return e.stream(ctx, c, d.ID, f.raw)
	}
	return e.printData(d, func(w io.Writer) error {
		fmt.Fprintf(w, "Created job %s on compute %s (status %s)\n", d.ID, d.Compute, d.Status)
		for _, warn := range d.Warnings {
			if !slices.Contains(warnings, warn) {
				fmt.Fprintf(e.Stderr, "warning: %s\n", warn)
			}
		}
		fmt.Fprintf(w, "Follow it with: hangar job stream %s\n", d.ID)
		return nil
	})
}

// uploadJob uploads the code folder and local data inputs, recording their manifests in the
// spec; for a pipeline, every step's too (one uploader: a folder two steps share is scanned and
// sent once, and only the blobs the workspace lacks are sent).
func (e *Env) uploadJob(ctx context.Context, c *api.Client, sp *job.Spec) error {
	u := e.newUploader(c)
	defer u.close()
	if err := uploadSpec(ctx, u, sp); err != nil {
		return err
	}
	if sp.Pipeline == nil {
		return nil
	}
	return uploadSteps(ctx, u, sp.Pipeline.Steps, func(st *job.PipelineStep) *job.Spec { return &st.Spec })
}

// uploadSteps uploads each step's code folder and local data inputs, in name order (a
// pipeline job's steps, a pipeline component's).
func uploadSteps[S any](ctx context.Context, u *uploader, steps map[string]S, specOf func(*S) *job.Spec) error {
	for _, name := range slices.Sorted(maps.Keys(steps)) {
		st := steps[name]
		sp := specOf(&st)
		sp.Inputs = maps.Clone(sp.Inputs)
		if err := uploadSpec(ctx, u, sp); err != nil {
			return fmt.Errorf("jobs.%s: %w", name, err)
		}
		steps[name] = st
	}
	return nil
}

// uploadSpec uploads one job's (or step's) code folder and local data inputs.
func uploadSpec(ctx context.Context, u *uploader, sp *job.Spec) error {
	if sp.Code != "" || len(sp.AdditionalIncludes) > 0 {
		h, err := u.code(ctx, sp.Code, sp.AdditionalIncludes...)
		if err != nil {
			return err
		}
		sp.CodeSnapshot = h
	}
	for name, in := range sp.Inputs {
		if in.IsLiteral() || !filepath.IsAbs(in.Path) {
			continue
		}
		st, err := os.Stat(in.Path)
		if err != nil {
			return fmt.Errorf("input %s: %w", name, err)
		}
		h, err := u.data(ctx, name, in.Path, !st.IsDir())
		if err != nil {
			return err
		}
		in.Manifest = h
		sp.Inputs[name] = in
	}
	return nil
}

// specError prints every problem of a spec file, one per line.
func specError(err error) error {
	var list spec.ErrorList
	if errors.As(err, &list) && len(list) > 1 {
		var lines []string
		for _, e := range list {
			lines = append(lines, "  "+e.Error())
		}
		return fmt.Errorf("%d problems:\n%s", len(list), strings.Join(lines, "\n"))
	}
	return err
}
