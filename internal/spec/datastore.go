package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/datastore"
)

// datastoreKeys are the keys --set may create in a datastore file (never credentials: a secret
// on a command line stays in the shell's history).
var datastoreKeys = []string{"name", "type", "path", "description", "tags.*", "computes", "account_name", "container_name",
	"filesystem", "endpoint", "protocol", "bucket", "endpoint_url", "region"}

// DatastoreFile is a datastore file read: the datastore, and its credentials (nil when the file
// gives none: the node's ambient identity).
type DatastoreFile struct {
	Datastore   datastore.Datastore
	Credentials *datastore.Credentials
}

// ParseDatastoreFile reads a datastore YAML: Hangar's local_folder (a folder on a shared
// filesystem), or an object store in Azure's datastore YAML (azure_blob, azure_data_lake_gen2)
// and Hangar's own for s3 and gcs. Azure's other types are refused, naming those taken.
func ParseDatastoreFile(file string, sets []string) (*DatastoreFile, []string, error) {
	data, err := readSpec(file)
	if err != nil {
		return nil, nil, err
	}
	return ParseDatastore(file, data, sets)
}

// ParseDatastore is ParseDatastoreFile for YAML already read; a GCS key file named by path
// resolves against file's folder.
func ParseDatastore(file string, data []byte, sets []string) (*DatastoreFile, []string, error) {
	for _, s := range sets {
		if k, _, _ := strings.Cut(s, "="); k == "credentials" || strings.HasPrefix(k, "credentials.") {
			return nil, nil, ErrorList{&Error{File: file, Path: "--set " + k, Msg: "credentials are given in the file only (a command line stays in the shell's history)"}}
		}
	}
	d, root := begin(file, data, filepath.Dir(file), sets, datastoreKeys)
	if root == nil {
		return nil, d.warnings, d.errs.err()
	}
	var ds datastore.Datastore
	if t := lookup(root, "type"); t != nil {
		ds.Type = strings.ToLower(strings.TrimSpace(d.str(t, "type")))
		if !slices.Contains(datastore.Types, ds.Type) {
			if datastore.IsRefusedType(ds.Type) {
				d.errorf(t, "type", "%v", datastore.RefusedTypeError(ds.Type))
			} else {
				d.expected(t, "type", "one of "+strings.Join(datastore.Types, ", "))
			}
			return nil, d.warnings, d.errs.err()
		}
	}
	var creds *datastore.Credentials
	got := d.mapping(root, "", d.assets.datastoreFields(&ds, &creds))
	switch {
	case got["name"] == nil:
		d.required(nil, "name")
	case datastore.CheckName(ds.Name) != nil:
		d.expected(got["name"], "name", "a name of letters, digits, _ and - (at most 255)")
	case ds.Name == datastore.WorkspaceBlobStore:
		d.errorf(got["name"], "name", "%s is the workspace's own datastore and cannot be replaced", ds.Name)
	}
	if got["type"] == nil {
		d.required(nil, "type")
		return result(d, &DatastoreFile{Datastore: ds, Credentials: creds})
	}
	for _, k := range requiredDatastoreFields[ds.Type] {
		if got[k] == nil {
			d.required(nil, k)
		}
	}
	if len(d.errs) == 0 {
		d.checkDatastore(got, ds, creds)
	}
	return result(d, &DatastoreFile{Datastore: ds, Credentials: creds})
}

var requiredDatastoreFields = map[string][]string{
	datastore.TypeLocalFolder: {"path"},
	datastore.TypeAzureBlob:   {"account_name", "container_name"},
	datastore.TypeADLSGen2:    {"account_name", "filesystem"},
	datastore.TypeS3:          {"bucket"},
	datastore.TypeGCS:         {"bucket"},
}

// checkDatastore reports datastore.Check's and CheckCredentials' problems at the field they name.
func (d *decoder) checkDatastore(got map[string]*yaml.Node, ds datastore.Datastore, creds *datastore.Credentials) {
	if err := datastore.Check(ds); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		if got[field] == nil {
			field, msg = "", err.Error()
		}
		d.errorf(got[field], field, "%s", msg)
	}
	if creds == nil {
		return
	}
	if err := datastore.CheckCredentials(ds.Type, *creds); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		d.errorf(got["credentials"], field, "%s", msg)
	}
}

// datastoreFields is the field table of a datastore file: every type's fields (Check refuses
// those of another type, naming them).
func (d *assetDecoder) datastoreFields(ds *datastore.Datastore, creds **datastore.Credentials) fields {
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = strings.TrimSpace(d.str(n, p)) }
	}
	return fields{
		"$schema":        nil,
		"name":           str(&ds.Name),
		"type":           nil,
		"description":    func(n *yaml.Node, p string) { ds.Description = d.str(n, p) },
		"tags":           func(n *yaml.Node, p string) { ds.Tags = d.stringMap(n, p) },
		"path":           func(n *yaml.Node, p string) { ds.Path = d.assets.sharedFolder(n, p) },
		"computes":       func(n *yaml.Node, p string) { ds.Computes = d.stringList(n, p) },
		"account_name":   str(&ds.AccountName),
		"container_name": str(&ds.ContainerName),
		"filesystem":     str(&ds.Filesystem),
		"endpoint":       str(&ds.Endpoint),
		"protocol":       func(n *yaml.Node, p string) { ds.Protocol = strings.ToLower(strings.TrimSpace(d.str(n, p))) },
		"bucket":         str(&ds.Bucket),
		"endpoint_url":   str(&ds.EndpointURL),
		"region":         str(&ds.Region),
		"credentials":    func(n *yaml.Node, p string) { *creds = d.credentials(n, p) },
	}
}

// credentials decodes a datastore's credentials: Azure's (account_key, sas_token, a service
// principal), S3's keys, a GCS service account's JSON key (inline, or a file path resolved next
// to the YAML). Values never appear in a message.
func (d *assetDecoder) credentials(n *yaml.Node, path string) *datastore.Credentials {
	var c datastore.Credentials
	secret := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) {
			if s, ok := d.scalar(n, p, "a string"); ok {
				*dst = strings.TrimSpace(s.Value)
			}
		}
	}
	d.mapping(n, path, fields{
		"account_key":          secret(&c.AccountKey),
		"sas_token":            secret(&c.SASToken),
		"tenant_id":            secret(&c.TenantID),
		"client_id":            secret(&c.ClientID),
		"client_secret":        secret(&c.ClientSecret),
		"access_key_id":        secret(&c.AccessKeyID),
		"secret_access_key":    secret(&c.SecretAccessKey),
		"session_token":        secret(&c.SessionToken),
		"service_account_json": func(n *yaml.Node, p string) { c.ServiceAccountJSON = d.serviceAccount(n, p) },
	})
	c = c.Normalized()
	return &c
}

// serviceAccount reads a GCS service account's JSON key: the JSON itself, or the path of its
// file (relative to the YAML's folder). Either must be a JSON object.
func (d *assetDecoder) serviceAccount(n *yaml.Node, path string) string {
	s, ok := d.scalar(n, path, "a service account's JSON key, or the path of its file")
	if !ok {
		return ""
	}
	v := strings.TrimSpace(s.Value)
	if !strings.HasPrefix(v, "{") {
		p := v
		if !filepath.IsAbs(p) {
			p = filepath.Join(d.baseDir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			if strings.ContainsAny(v, "\n\r") || len(v) > 1024 {
				d.errorf(n, path, "expected a service account's JSON key (a JSON object), or the path of its file")
			} else {
				d.errorf(n, path, "read the key file %s: %v", v, unwrapPathError(err))
			}
			return ""
		}
		v = strings.TrimSpace(string(b))
	}
	var obj map[string]any
	if json.Unmarshal([]byte(v), &obj) != nil {
		d.errorf(n, path, "expected a service account's JSON key (a JSON object), or the path of its file") // never the value
		return ""
	}
	return v
}

// sharedFolder decodes a local_folder's path: absolute and clean, because every node that
// mounts the folder must find it at that same path; it is not resolved against the file.
func (d *assetDecoder) sharedFolder(n *yaml.Node, path string) string {
	s := strings.TrimSpace(d.str(n, path))
	if !filepath.IsAbs(s) || filepath.Clean(s) != s {
		d.expected(n, path, "a clean absolute folder path (the same on every node that mounts it)")
		return ""
	}
	return s
}
