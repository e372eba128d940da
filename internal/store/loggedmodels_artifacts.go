package store

import (
	"context"
)

// A logged model's files (<exp>/models/<id>/artifacts/<path> through the artifact proxy), kept
// as a run's uploaded files are (mlflowartifacts.go), in logged_model_artifacts. The returned
// MLflowArtifact's RunID holds the model's id.

// PutLoggedModelArtifact records a file of a logged model, replacing what the path named
// (ErrPathTaken as PutMLflowArtifact).
func (s *Tracking) PutLoggedModelArtifact(ctx context.Context, modelID string, a MLflowArtifact) error {
	a.RunID = modelID
	return s.putArtifact(ctx, modelArtifacts, a)
}

// LoggedModelArtifact returns the model's file at p (ErrNotFound when there is none).
func (s *Tracking) LoggedModelArtifact(ctx context.Context, modelID, p string) (*MLflowArtifact, error) {
	return s.artifact(ctx, modelArtifacts, modelID, p)
}

// LoggedModelArtifactChildren is MLflowArtifactChildren of a logged model's files.
func (s *Tracking) LoggedModelArtifactChildren(ctx context.Context, modelID, dir, after string, limit int) ([]ArtifactEntry, error) {
	return s.artifactChildren(ctx, modelArtifacts, modelID, dir, after, limit)
}

// DeleteLoggedModelArtifacts is DeleteMLflowArtifacts of a logged model's files.
func (s *Tracking) DeleteLoggedModelArtifacts(ctx context.Context, modelID, p string) (int64, error) {
	return s.deleteArtifacts(ctx, modelArtifacts, modelID, p)
}

// LoggedModelArtifactFiles is MLflowArtifactFiles of a logged model's files.
func (s *Tracking) LoggedModelArtifactFiles(ctx context.Context, modelID string, limit int) ([]MLflowArtifact, error) {
	return s.artifactFiles(ctx, modelArtifacts, modelID, limit)
}
