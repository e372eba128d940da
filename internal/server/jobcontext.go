package server

import (
	"net/url"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

// jobContext is a job's creation context and services as Azure's job show has them: who created
// it (its created_by property, which the server stamped with the user the request authenticated
// as) and when; the studio's page of the job and the MLflow tracking URI, at the server's address.
func (s *jobRoutes) jobContext(run *job.Run) (*api.CreationContext, map[string]api.JobService) {
	cc := &api.CreationContext{CreatedAt: run.CreatedAt, CreatedBy: run.Spec.Properties["created_by"], CreatedByType: "User"}
	if s.cfg.URL == nil {
		return cc, nil
	}
	base := strings.TrimSuffix(s.cfg.URL(), "/")
	if base == "" {
		return cc, nil
	}
	return cc, map[string]api.JobService{
		"Studio":   {Endpoint: base + "/studio/#/jobs/" + url.PathEscape(run.ID), Type: "Studio"},
		"Tracking": {Endpoint: base, Type: "Tracking"},
	}
}
