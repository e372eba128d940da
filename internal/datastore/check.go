package datastore

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/pattern"
)

// Types are the datastore types that may be created.
var Types = append([]string{TypeLocalFolder}, ObjectTypes...)

// refusedTypes are Azure's datastore types Hangar does not take, with why.
var refusedTypes = map[string]string{
	TypeAzureFile: "an Azure file share is an SMB share, not an object store",
	TypeADLSGen1:  "Azure Data Lake Storage Gen1 was retired by Azure in 2024",
	TypeOneLake:   "OneLake is Microsoft Fabric's, reached only through Fabric's identity",
}

// RefusedTypeError is the refusal of a datastore type Hangar does not take, naming those it does.
func RefusedTypeError(t string) error {
	why, ok := refusedTypes[t]
	if !ok {
		why = "not a datastore type"
	}
	return fmt.Errorf("type %s: %s; Hangar's datastores are of type %s", t, why, strings.Join(Types, ", "))
}

// IsRefusedType reports whether t is one of Azure's types that Hangar refuses by name.
func IsRefusedType(t string) bool {
	_, ok := refusedTypes[t]
	return ok
}

// dnsSuffixRE is an Azure endpoint given as a DNS suffix (core.windows.net). The account,
// container and bucket names' patterns are objecturi.go's.
var dnsSuffixRE = pattern.New(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$`)

// Protocols are what Azure's protocol field takes, per type.
var Protocols = map[string][]string{
	TypeAzureBlob: {"https", "wasbs"},
	TypeADLSGen2:  {"https", "abfss"},
}

// checkObject says what is wrong with an object-store datastore's location fields: the fields of
// its type given and valid, the fields of the other types absent. Each message starts with the
// field's path.
func checkObject(d Datastore) error {
	if d.Path != "" || len(d.Computes) > 0 {
		return fmt.Errorf("path: a %s datastore has no path or computes (those are local_folder's); its paths are given in azureml://datastores/%s/paths/<path>", d.Type, d.Name)
	}
	switch d.Type {
	case TypeS3, TypeGCS:
		if err := absent(d.Type, map[string]string{"account_name": d.AccountName, "container_name": d.ContainerName,
			"filesystem": d.Filesystem, "endpoint": d.Endpoint, "protocol": d.Protocol}); err != nil {
			return err
		}
		if d.Type == TypeGCS && d.Region != "" {
			return fmt.Errorf("region: a gcs datastore has no region (a bucket's location is its own)")
		}
		if !bucketName.MatchString(d.Bucket) {
			return fmt.Errorf("bucket: %q is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)", d.Bucket)
		}
		return checkServiceURL("endpoint_url", d.EndpointURL)
	}
	container, field, other := d.ContainerName, "container_name", map[string]string{"filesystem": d.Filesystem}
	if d.Type == TypeADLSGen2 {
		container, field, other = d.Filesystem, "filesystem", map[string]string{"container_name": d.ContainerName}
	}
	other["bucket"], other["endpoint_url"], other["region"] = d.Bucket, d.EndpointURL, d.Region
	if err := absent(d.Type, other); err != nil {
		return err
	}
	if !accountName.MatchString(d.AccountName) {
		return fmt.Errorf("account_name: %q is not a storage account name (3 to 24 lowercase letters and digits)", d.AccountName)
	}
	if !containerName.MatchString(container) {
		return fmt.Errorf("%s: %q is not a container name (3 to 63 lowercase letters, digits and single hyphens)", field, container)
	}
	if d.Protocol != "" && !slices.Contains(Protocols[d.Type], d.Protocol) {
		return fmt.Errorf("protocol: %q: expected one of %s", d.Protocol, strings.Join(Protocols[d.Type], ", "))
	}
	if strings.Contains(d.Endpoint, "://") {
		return checkServiceURL("endpoint", d.Endpoint)
	}
	if d.Endpoint != "" && !dnsSuffixRE.MatchString(d.Endpoint) {
		return fmt.Errorf("endpoint: %q: expected the storage service's DNS suffix (core.windows.net) or a full URL (an emulator's, http://127.0.0.1:10000/%s)", d.Endpoint, d.AccountName)
	}
	return nil
}

func absent(typ string, fields map[string]string) error {
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		if fields[k] != "" {
			return fmt.Errorf("%s: not a field of a %s datastore", k, typ)
		}
	}
	return nil
}

// checkServiceURL checks a service's URL: http or https, a host, no query, no credentials in it.
func checkServiceURL(field, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: expected an http or https URL without a query (the service's address)", field)
	}
	if u.User != nil {
		return fmt.Errorf("%s: a URL with a user or password in it; give credentials under credentials:", field)
	}
	return nil
}

// CheckCredentials says what is wrong with credentials for a datastore of type t, or returns nil:
// one kind of credentials, of a kind t takes, complete. The zero value (the node's ambient
// identity) is always allowed for an object store; a local_folder has none. Messages name
// fields, never values.
func CheckCredentials(t string, c Credentials) error {
	if c == (Credentials{}) {
		return nil
	}
	if !IsObjectType(t) {
		return fmt.Errorf("credentials: a %s datastore has no credentials", t)
	}
	given := c.given()
	want := credentialFields[t]
	for _, f := range given {
		if !slices.Contains(want, f) {
			return fmt.Errorf("credentials.%s: not a credential of a %s datastore (expected %s)", f, t, credentialKinds[t])
		}
	}
	sp := c.TenantID != "" || c.ClientID != "" || c.ClientSecret != ""
	n := 0
	for _, set := range []bool{c.AccountKey != "", c.SASToken != "", sp, c.AccessKeyID != "" || c.SecretAccessKey != "" || c.SessionToken != "", c.ServiceAccountJSON != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("credentials: %s given together; expected one of %s", strings.Join(given, ", "), credentialKinds[t])
	case sp && (c.TenantID == "" || c.ClientID == "" || c.ClientSecret == ""):
		return fmt.Errorf("credentials: a service principal needs tenant_id, client_id and client_secret")
	case (c.AccessKeyID != "") != (c.SecretAccessKey != "") || (c.SessionToken != "" && c.AccessKeyID == ""):
		return fmt.Errorf("credentials: an S3 access key needs access_key_id and secret_access_key (session_token with them for temporary credentials)")
	}
	return nil
}

var credentialFields = map[string][]string{
	TypeAzureBlob: {"account_key", "sas_token", "tenant_id", "client_id", "client_secret"},
	TypeADLSGen2:  {"account_key", "sas_token", "tenant_id", "client_id", "client_secret"},
	TypeS3:        {"access_key_id", "secret_access_key", "session_token"},
	TypeGCS:       {"service_account_json"},
}

var credentialKinds = map[string]string{
	TypeAzureBlob: "account_key, sas_token, or tenant_id with client_id and client_secret",
	TypeADLSGen2:  "tenant_id with client_id and client_secret, account_key, or sas_token",
	TypeS3:        "access_key_id with secret_access_key (and session_token)",
	TypeGCS:       "service_account_json",
}

// Normalized is c as stored: a SAS token without the leading ? that Azure's portal and example
// files give it with.
func (c Credentials) Normalized() Credentials {
	c.SASToken = strings.TrimPrefix(c.SASToken, "?")
	return c
}

// given names the credential fields set, in their declared order.
func (c Credentials) given() []string {
	var out []string
	for _, f := range []struct {
		name, v string
	}{{"account_key", c.AccountKey}, {"sas_token", c.SASToken}, {"tenant_id", c.TenantID}, {"client_id", c.ClientID},
		{"client_secret", c.ClientSecret}, {"access_key_id", c.AccessKeyID}, {"secret_access_key", c.SecretAccessKey},
		{"session_token", c.SessionToken}, {"service_account_json", c.ServiceAccountJSON}} {
		if f.v != "" {
			out = append(out, f.name)
		}
	}
	return out
}
