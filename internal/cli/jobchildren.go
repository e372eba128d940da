package cli

import (
	"context"

	"github.com/hangar-ml/hangar/internal/api"
)

// childJobs is job list --parent-job-name (az's): the jobs that are parent's steps (a pipeline)
// or trials (a sweep), with the list's other filters. They were all created after the parent,
// so the pages read start there; every page is read, the answer is one.
func childJobs(ctx context.Context, c *api.Client, q api.JobListQuery, parent string) (*api.JobPage, error) {
	p, err := c.Jobs.Get(ctx, parent)
	if err != nil {
		return nil, err
	}
	if q.Since.IsZero() || q.Since.Before(p.CreatedAt) {
		q.Since = p.CreatedAt
	}
	if q.Archived == "" {
		q.Archived = "all" // a step is listed whatever the list hides
	}
	q.Limit, q.PageToken = 1000, ""
	out := &api.JobPage{Runs: []api.RunDetail{}}
	for {
		page, err := c.Jobs.ListPage(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Runs {
			if isChildOf(r, parent) {
				out.Runs = append(out.Runs, r)
			}
		}
		if page.Next == "" {
			return out, nil
		}
		q.PageToken = page.Next
	}
}

// isChildOf reports whether r is a step or a trial of parent.
func isChildOf(r api.RunDetail, parent string) bool {
	return r.PipelineOf != nil && r.PipelineOf.Pipeline == parent || r.TrialOf != nil && r.TrialOf.Sweep == parent
}
