package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/model"
)

// The registry events MLflow's webhooks tell (mlflow/entities/webhook.py), with the payloads its
// server sends (mlflow/webhooks/types.py). The registry's writes append them through appendEvent
// in their own transactions. MLflow has no event for a stage transition, a registered model's
// tags, rename or delete, nor a version's description or delete: neither has Hangar.
const (
	EventRegisteredModelCreated   = "registered_model.created"
	EventModelVersionCreated      = "model_version.created"
	EventModelVersionTagSet       = "model_version_tag.set"
	EventModelVersionTagDeleted   = "model_version_tag.deleted"
	EventModelVersionAliasCreated = "model_version_alias.created"
	EventModelVersionAliasDeleted = "model_version_alias.deleted"
)

// eventNow stamps the events the registry's writes append.
var eventNow = func() time.Time { return time.Now().UTC() }

type registeredModelCreated struct {
	Name        string            `json:"name"`
	Tags        map[string]string `json:"tags"`
	Description *string           `json:"description"`
}

type modelVersionCreated struct {
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Source      string            `json:"source"`
	RunID       *string           `json:"run_id"`
	Tags        map[string]string `json:"tags"`
	Description *string           `json:"description"`
}

type modelVersionTagSet struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Key     string `json:"key"`
	Value   string `json:"value"`
}

type modelVersionTagDeleted struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Key     string `json:"key"`
}

type modelVersionAliasCreated struct {
	Name    string `json:"name"`
	Alias   string `json:"alias"`
	Version string `json:"version"`
}

type modelVersionAliasDeleted struct {
	Name  string `json:"name"`
	Alias string `json:"alias"`
}

// orNull is s, or JSON's null when it is empty (MLflow's payloads say None).
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// mlflowVersion is whether MLflow's registry shows a version: an integer one (mlflowapi).
func mlflowVersion(version string) bool { return model.Number(version) > 0 || version == "0" }

// modelVersionCreatedEvent appends model_version.created for a version MLflow shows.
func modelVersionCreatedEvent(ctx context.Context, tx *sql.Tx, v model.Version) error {
	if !mlflowVersion(v.Version) {
		return nil
	}
	var run string
	if rest, ok := strings.CutPrefix(v.Source, "azureml://jobs/"); ok {
		run, _, _ = strings.Cut(rest, "/")
	}
	tags := v.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return appendEvent(ctx, tx, EventModelVersionCreated, modelVersionCreated{Name: v.Name, Version: v.Version, Source: v.Source,
		RunID: orNull(run), Tags: tags, Description: orNull(v.Description)}, eventNow())
}

// tagEvents appends model_version_tag.set for each tag of a version that after adds or
// changes, and model_version_tag.deleted for each it removes, in key order.
func tagEvents(ctx context.Context, tx *sql.Tx, name, version string, before, after asset.Meta) error {
	if !mlflowVersion(version) {
		return nil
	}
	at := eventNow()
	for _, k := range slices.Sorted(maps.Keys(after.Tags)) {
		if old, ok := before.Tags[k]; ok && old == after.Tags[k] {
			continue
		}
		if err := appendEvent(ctx, tx, EventModelVersionTagSet, modelVersionTagSet{name, version, k, after.Tags[k]}, at); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before.Tags)) {
		if _, ok := after.Tags[k]; ok {
			continue
		}
		if err := appendEvent(ctx, tx, EventModelVersionTagDeleted, modelVersionTagDeleted{name, version, k}, at); err != nil {
			return err
		}
	}
	return nil
}
