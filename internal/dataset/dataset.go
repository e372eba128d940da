package dataset

import (
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/datastore"
)

// Data asset types, as the Azure ML data schema names them.
const (
	URIFolder = "uri_folder"
	URIFile   = "uri_file"
	MLTable   = "mltable"
)

// Types lists the data asset types, the default first.
var Types = []string{URIFolder, URIFile, MLTable}

// MLTableFile is the file an mltable folder must hold at its top.
const MLTableFile = "MLTable"

// SourceLocal is a Version's Source when its files were uploaded from the client.
const SourceLocal = "local"

// Kind is how data assets are named in messages and Azure ids (.../data/<name>/versions/<v>).
var Kind = asset.Kind{Noun: "data asset", Collection: "data", Command: "data"}

// Spec is what a data file (or `data create`'s flags) asks to register. Path is a local path
// (absolute, on the client), a job output (azureml://jobs/<job>/outputs/<output>[/paths/<p>]),
// a datastore path (azureml://datastores/<datastore>/paths/<p>) or an http(s) URL.
type Spec struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Type    string `json:"type,omitempty"`
	Path    string `json:"path"`
	asset.Meta
	// Datastore is where a local upload is recorded (workspaceblobstore, the only one that
	// takes uploads); empty is the same.
	Datastore string `json:"datastore,omitempty"`
}

// Version is one registered version of a data asset. Manifest is the hash of its files'
// manifest in the workspace's blob store; it is empty for data read where it is (Path then
// says where). Source is where it was registered from: "local", a job output, a datastore path.
type Version struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Type     string `json:"type"`
	Manifest string `json:"manifest,omitempty"`
	Path     string `json:"path,omitempty"`
	Source   string `json:"source"`
	// Location is where the bytes of a version in an object store lie (a path of an object-store
	// datastore, or a direct s3://, gs://, wasbs://, abfss:// URI): registered where it is,
	// nothing uploaded, no manifest; Location.Datastore names the datastore whose credentials
	// read it ("" for the node's own identity).
	Location *datastore.Location `json:"location,omitempty"`
	asset.Meta
	// Files and Size describe the manifest, for show and list (0 for data read in place).
	Files     int       `json:"files"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	Archived  bool      `json:"archived"`
	// Import is set on a version a data import registered.
	Import *Imported `json:"import,omitempty"`
}

// ID is the reference that names this version: azureml:<name>:<version>.
func (v Version) ID() string { return "azureml:" + v.Name + ":" + v.Version }

// AssetKey makes a data version an asset.Versioned, for Latest and Listing.
func (v Version) AssetKey() asset.Key {
	return asset.Key{Name: v.Name, Version: v.Version, Archived: v.Archived, Created: v.CreatedAt}
}

// CheckType returns the type's canonical spelling ("" is uri_folder), or an error.
func CheckType(t string) (string, error) { return asset.CheckType(t, Types) }

// CheckFiles says whether the files (slash paths relative to the asset's top) fit the type: a
// uri_file is one file, an mltable holds an MLTable file at its top. where names the data in
// the error (a local folder, a job output).
func CheckFiles(typ, where string, files []string) error {
	switch typ {
	case URIFile:
		if len(files) != 1 {
			return fmt.Errorf("type uri_file: %s holds %d files, expected one file (use uri_folder for a folder)", where, len(files))
		}
	case MLTable:
		for _, f := range files {
			if f == MLTableFile {
				return nil
			}
		}
		return fmt.Errorf("type mltable: %s has no %s file at its top (an mltable folder holds an MLTable file describing how to read its data)", where, MLTableFile)
	}
	return nil
}

// Import sources, as Azure's data import file names them.
const (
	SourceDatabase   = "database"
	SourceFileSystem = "file_system"
)

// ImportSpec is a data import file (az ml data import -f): the asset to register and the
// source a run reads it from, through a workspace connection.
type ImportSpec struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Type    string `json:"type"` // mltable (a database source) or uri_folder (a file_system one)
	// Path is where the data is written in workspaceblobstore, ${{name}} being the asset's name.
	Path string `json:"path"`
	asset.Meta
	Source ImportSource `json:"source"`
	// Compute is where the import runs ("" : local).
	Compute string `json:"compute,omitempty"`
}

// ImportSource is an import's source: a query (database) or a path (file_system) read through a
// connection (its name, azureml: removed).
type ImportSource struct {
	Type       string `json:"type"`
	Query      string `json:"query,omitempty"`
	Path       string `json:"path,omitempty"`
	Connection string `json:"connection"`
}

// Imported is where an imported version came from, for show: the connection, the query or the
// path, and the import's job.
type Imported struct {
	Connection string `json:"connection"`
	Query      string `json:"query,omitempty"`
	Path       string `json:"path,omitempty"`
	Job        string `json:"job"`
}
