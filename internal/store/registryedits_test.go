package store

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/model"
	"github.com/hangar-ml/hangar/internal/serving"
)

func stages(t *testing.T, s *Store, name string) string {
	t.Helper()
	vs, err := s.Assets.Models(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.Version+":"+v.RegistryStage())
	}
	return strings.Join(out, ",")
}

// A transition puts one version in a stage; archive_existing_versions archives the others in
// it in the same write; Archived is the archive, and leaving it restores the version.
func TestTransitionModelStage(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	addVersions(t, s, 3, "iris")
	for _, tc := range []struct {
		version, stage string
		others         bool
		want           string
	}{
		{"1", model.StageProduction, false, "1:Production,2:None,3:None"},
		{"2", model.StageProduction, false, "1:Production,2:Production,3:None"},
		{"3", model.StageProduction, true, "1:Archived,2:Archived,3:Production"},
		{"1", model.StageStaging, false, "1:Staging,2:Archived,3:Production"},
		{"3", model.StageNone, false, "1:Staging,2:Archived,3:None"},
	} {
		v, err := s.Assets.TransitionModelStage(ctx, "iris", tc.version, tc.stage, tc.others)
		if err != nil || v.RegistryStage() != tc.stage {
			t.Fatalf("transition %s to %s = %+v, %v", tc.version, tc.stage, v, err)
		}
		if got := stages(t, s, "iris"); got != tc.want {
			t.Errorf("after %s to %s: %s, want %s", tc.version, tc.stage, got, tc.want)
		}
	}
	if _, err := s.Assets.TransitionModelStage(ctx, "iris", "7", model.StageNone, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("transition of a missing version = %v", err)
	}
}

// A deleted version is a tombstone: no read sees it (get, list, @latest, aliases), its number
// is not given again, its manifest is dropped, and the registered model stays. Deleting the
// registered model deletes every version, its row, tags and aliases; the name may be
// registered again, its numbers going on.
func TestDeleteModel(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	addVersions(t, s, 3, "iris")
	if err := s.Assets.SetModelAlias(ctx, ModelAlias{"iris", "champion", "3"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.DeleteModel(ctx, "iris", "3", at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Assets.Model(ctx, "iris", "3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get a deleted version = %v", err)
	}
	if v, err := s.Assets.Model(ctx, "iris", "latest"); err != nil || v.Version != "2" {
		t.Errorf("@latest after deleting 3 = %+v, %v", v, err)
	}
	if a, _ := s.Assets.ModelAliases(ctx, "iris"); len(a) != 0 {
		t.Errorf("aliases of a deleted version = %+v", a)
	}
	if err := s.Assets.DeleteModel(ctx, "iris", "3", at); !errors.Is(err, ErrNotFound) || !strings.HasPrefix(err.Error(), "Model Version (name=iris, version=3) not found") {
		t.Errorf("delete it again = %v", err)
	}
	if _, err := s.Assets.SetModelArchived(ctx, "iris", "3", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("archive a deleted version = %v", err)
	}
	v, err := s.Assets.CreateModel(ctx, model.Version{Name: "iris", Manifest: "m", CreatedAt: at})
	if err != nil || v.Version != "4" {
		t.Errorf("next version after deleting 3 = %+v, %v; want 4", v, err)
	}
	var manifest string
	if err := s.db.QueryRowContext(ctx, `SELECT spec FROM models WHERE name = 'iris' AND version = '3'`).Scan(&manifest); err != nil || strings.Contains(manifest, `"manifest":"m"`) {
		t.Errorf("the tombstone's spec = %s, %v; want its manifest dropped", manifest, err)
	}

	// The last versions go: the registered model stays, without versions.
	for _, ver := range []string{"1", "2", "4"} {
		if err := s.Assets.DeleteModel(ctx, "iris", ver, at); err != nil {
			t.Fatal(err)
		}
	}
	if rows, err := s.Assets.RegisteredModels(ctx, "iris"); err != nil || len(rows) != 1 {
		t.Errorf("registered model after its versions went = %+v, %v", rows, err)
	}

	// The whole model goes, tags and all; registered again, its numbers go on.
	addVersions(t, s, 1, "mnist")
	if err := s.Assets.SetRegisteredModelTag(ctx, RegisteredModelTag{"mnist", "team", "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.DeleteModel(ctx, "mnist", "", at); err != nil {
		t.Fatal(err)
	}
	if vs, _ := s.Assets.Models(ctx, "mnist"); len(vs) != 0 {
		t.Errorf("versions of a deleted model = %+v", vs)
	}
	if err := s.Assets.DeleteModel(ctx, "mnist", "", at); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete a deleted model = %v", err)
	}
	if err := s.Assets.CreateRegisteredModel(ctx, RegisteredModel{Name: "mnist", Created: at}, nil); err != nil {
		t.Fatalf("register a deleted name again: %v", err)
	}
	if tags, _ := s.Assets.RegisteredModelTags(ctx, "mnist"); len(tags) != 0 {
		t.Errorf("tags of a re-registered name = %+v", tags)
	}
	if v, err := s.Assets.CreateModel(ctx, model.Version{Name: "mnist", Manifest: "m", CreatedAt: at}); err != nil || v.Version != "2" {
		t.Errorf("first version of the re-registered mnist = %+v, %v; want 2", v, err)
	}
}

// A rename moves the versions (deleted ones with their numbers), row, tags and aliases; a taken
// name is ErrExists; a deployment naming the model by reference refuses it, listed.
func TestRenameModel(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	addVersions(t, s, 2, "iris", "mnist")
	if err := s.Assets.SetRegisteredModelTag(ctx, RegisteredModelTag{"iris", "team", "a"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.SetModelAlias(ctx, ModelAlias{"iris", "champion", "1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.DeleteModel(ctx, "iris", "2", at); err != nil {
		t.Fatal(err)
	}
	if err := s.Assets.RenameModel(ctx, "iris", "mnist"); !errors.Is(err, ErrExists) {
		t.Errorf("rename onto mnist = %v, want ErrExists", err)
	}
	if err := s.Assets.RenameModel(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename a missing model = %v, want ErrNotFound", err)
	}
	if err := s.Assets.RenameModel(ctx, "iris", "flowers"); err != nil {
		t.Fatal(err)
	}
	if vs, _ := s.Assets.Models(ctx, "iris"); len(vs) != 0 {
		t.Errorf("iris after the rename = %+v", vs)
	}
	v, err := s.Assets.Model(ctx, "flowers", "1")
	if err != nil || len(v.Aliases) != 1 || v.Aliases[0] != "champion" {
		t.Errorf("flowers:1 = %+v, %v", v, err)
	}
	if tags, _ := s.Assets.RegisteredModelTags(ctx, "flowers"); len(tags) != 1 {
		t.Errorf("flowers tags = %+v", tags)
	}
	if v, err := s.Assets.CreateModel(ctx, model.Version{Name: "flowers", Manifest: "m", CreatedAt: at}); err != nil || v.Version != "3" {
		t.Errorf("next flowers version = %+v, %v; want 3 (2 was deleted before the rename)", v, err)
	}

	// Deployments naming mnist by reference refuse its rename; an inline model does not count.
	if err := s.Serving.PutEndpoint(ctx, EndpointRecord{Spec: serving.Endpoint{Name: "ep"}, CreatedAt: at, UpdatedAt: at}, true); err != nil {
		t.Fatal(err)
	}
	for _, d := range []serving.Deployment{
		{Name: "blue", Endpoint: "ep", Model: serving.ModelRef{Ref: "mnist:1"}},
		{Name: "green", Endpoint: "ep", Model: serving.ModelRef{Manifest: "m", Name: "mnist"}},
	} {
		if _, err := s.Serving.PutDeployment(ctx, DeploymentRecord{Spec: d, CreatedAt: at, UpdatedAt: at}, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Serving.PutBatchEndpoint(ctx, BatchEndpointRecord{Spec: serving.BatchEndpoint{Name: "bep"}, CreatedAt: at, UpdatedAt: at}, true); err != nil {
		t.Fatal(err)
	}
	bd := serving.BatchDeployment{Name: "nightly", Endpoint: "bep", Model: serving.ModelRef{Ref: "mnist@latest"}}
	if err := s.Serving.PutBatchDeployment(ctx, BatchDeploymentRecord{Spec: bd, CreatedAt: at, UpdatedAt: at}, true); err != nil {
		t.Fatal(err)
	}
	err = s.Assets.RenameModel(ctx, "mnist", "digits")
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "online deployment blue of endpoint ep (mnist:1), batch deployment nightly of endpoint bep (mnist@latest)") ||
		strings.Contains(err.Error(), "green") {
		t.Errorf("rename mnist while deployed = %v", err)
	}
	if vs, _ := s.Assets.Models(ctx, "mnist"); len(vs) != 2 {
		t.Errorf("mnist after a refused rename = %+v", vs)
	}
}
