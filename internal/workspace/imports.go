package workspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/connection"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Data imports (hangar data import, docs/data.md "Connections and data import"): a run reads a
// connection's source into its output ImportOutput, written at the import's path in
// workspaceblobstore; when the run completes, RegisterImport registers that output as the
// version the import said it would become.

// ImportTypeData is the job type of a data import's run.
const ImportTypeData = "data_import"

// sourceConnection is the connection type each import source reads.
var sourceConnection = map[string]string{
	dataset.SourceDatabase:   connection.TypePostgreSQL,
	dataset.SourceFileSystem: connection.TypeS3,
}

// ImportJob is the run a data import makes, checked against the workspace: the connection is
// there and of the source's kind, the version is free (or the next integer, counting the imports
// not ended yet). The errors are *Error with the file's field paths.
func (cs *Connections) ImportJob(ctx context.Context, s dataset.ImportSpec) (*job.Spec, error) {
	if err := dataset.Kind.CheckName(s.Name); err != nil {
		return nil, Invalidf("name: %v", err)
	}
	want, ok := sourceConnection[s.Source.Type]
	if !ok {
		return nil, Invalidf("source.type: %q; expected database or file_system", s.Source.Type)
	}
	c, err := cs.ws.Store.Assets.Connection(ctx, s.Source.Connection)
	if errors.Is(err, store.ErrNotFound) {
		return nil, Invalidf("source.connection: no connection named %s in this workspace%s", s.Source.Connection, cs.known(ctx))
	} else if err != nil {
		return nil, err
	}
	if c.Type != want {
		return nil, Invalidf("source.connection: connection %s is of type %s; a %s source reads a %s connection", c.Name, c.Type, s.Source.Type, want)
	}
	imp := &job.Import{Connection: c.Name, ConnectionType: c.Type, SourceType: s.Source.Type, Query: s.Source.Query,
		Path: s.Source.Path, Asset: s.Name, AssetType: s.Type, Meta: s.Meta}
	if s.Source.Type == dataset.SourceFileSystem {
		t, err := connection.ParseS3Target(c.Target)
		if err != nil {
			return nil, Invalidf("source.connection: connection %s: target: %v", c.Name, err)
		}
		loc, err := t.Locate(s.Source.Path)
		if err != nil {
			return nil, Invalidf("source.path: %v", err)
		}
		imp.Store = &loc
	}
	if imp.Version, err = cs.importVersion(ctx, s.Name, s.Version); err != nil {
		return nil, err
	}
	path := strings.ReplaceAll(strings.ReplaceAll(s.Path, "${{ name }}", s.Name), "${{name}}", s.Name)
	return &job.Spec{
		Type:        ImportTypeData,
		DisplayName: "import " + s.Name + ":" + imp.Version + " from " + c.Name,
		Compute:     s.Compute,
		Outputs:     map[string]job.Output{job.ImportOutput: {Type: s.Type, Path: path}},
		Import:      imp,
	}, nil
}

// importVersion is the version an import will register: the one asked for when it is free, else
// the next integer after every version of the name and every import of it not ended yet.
func (cs *Connections) importVersion(ctx context.Context, name, asked string) (string, error) {
	versions, err := cs.ws.Store.Data.List(ctx, name)
	if err != nil {
		return "", err
	}
	active, err := cs.ws.Store.Runs.List(ctx, store.RunFilter{Active: true})
	if err != nil {
		return "", err
	}
	taken := map[string]string{}
	for _, v := range versions {
		taken[v.Version] = "data asset " + name + " version " + v.Version + " already exists"
	}
	for _, r := range active {
		if imp := r.Spec.Import; imp != nil && imp.Asset == name {
			taken[imp.Version] = fmt.Sprintf("import job %s will register data asset %s version %s", r.ID, name, imp.Version)
		}
	}
	if asked != "" {
		if why, ok := taken[asked]; ok {
			return "", Conflictf("version: %s; omit the version to import the next one", why)
		}
		return asked, nil
	}
	var next int64
	for v := range taken {
		next = max(next, asset.Number(v))
	}
	return strconv.FormatInt(next+1, 10), nil
}

// RegisterImport registers a completed import run's output as its data version. It is
// idempotent: a version this run registered already is returned as it is (the supervisor
// repeats its report until the server records the end, and a restart may ask again).
func (da *Data) RegisterImport(ctx context.Context, r *job.Run) (*dataset.Version, error) {
	imp := r.Spec.Import
	if got, err := da.ws.Store.Data.Get(ctx, imp.Asset, imp.Version); err == nil {
		if got.Import != nil && got.Import.Job == r.ID {
			return got, nil
		}
		return nil, Conflictf("data asset %s version %s was registered by someone else meanwhile; the import's data stays in the job's output (azureml://jobs/%s/outputs/%s)",
			imp.Asset, imp.Version, r.ID, job.ImportOutput)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	h := r.NamedOutputs[job.ImportOutput]
	if h == "" {
		return nil, Invalidf("import job %s wrote no output %s", r.ID, job.ImportOutput)
	}
	m, err := da.ws.readManifest(h)
	if err != nil {
		return nil, fmt.Errorf("read the output of import job %s: %w", r.ID, err)
	}
	var files []string
	for _, f := range m.Files() {
		files = append(files, f.Path)
	}
	if err := dataset.CheckFiles(imp.AssetType, "the import's output", files); err != nil {
		return nil, Invalidf("%v", err)
	}
	from := &dataset.Imported{Connection: imp.Connection, Query: imp.Query, Path: imp.Path, Job: r.ID}
	v := dataset.Version{Name: imp.Asset, Version: imp.Version, Type: imp.AssetType, Manifest: h, Meta: imp.Meta,
		Source: "import from connection " + imp.Connection + " (job " + r.ID + ")", Import: from,
		Files: len(files), Size: m.TotalSize(), CreatedAt: da.ws.Now()}
	if u, ok := OutputDatastorePath(r.ID, job.ImportOutput, r.Spec.Outputs[job.ImportOutput]); ok {
		v.Path = u.String()
	}
	created, err := da.create(ctx, v)
	if err != nil {
		return nil, err
	}
	da.ws.Log.Info("data asset imported", "data", created.Name, "version", created.Version, "connection", imp.Connection, "run", r.ID)
	return created, nil
}
