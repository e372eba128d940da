package objstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/datastore"
)

func TestOpen(t *testing.T) {
	s3loc := datastore.Location{Datastore: "s3ds", Type: datastore.TypeS3, Container: "bkt", Endpoint: "http://127.0.0.1:1", Path: "data"}
	azloc := datastore.Location{Datastore: "azds", Type: datastore.TypeAzureBlob, Account: "devstoreaccount1", Container: "c", Endpoint: "http://127.0.0.1:1/devstoreaccount1", Path: "x"}
	adls := azloc
	adls.Type = datastore.TypeADLSGen2
	gcs := datastore.Location{Datastore: "gds", Type: datastore.TypeGCS, Container: "bkt", Endpoint: "http://127.0.0.1:1"}
	file := azloc
	file.Type = datastore.TypeAzureFile
	noContainer := s3loc
	noContainer.Container = ""
	tests := []struct {
		name     string
		loc      datastore.Location
		cred     datastore.Credentials
		wantKind Kind   // "" = opens
		secret   string // must not appear in the message
	}{
		{name: "s3 access key", loc: s3loc, cred: datastore.Credentials{AccessKeyID: "AK", SecretAccessKey: "sekrit"}},
		{name: "s3 session token", loc: s3loc, cred: datastore.Credentials{AccessKeyID: "AK", SecretAccessKey: "sekrit", SessionToken: "tok"}},
		{name: "s3 ambient", loc: s3loc},
		{name: "azure account key", loc: azloc, cred: datastore.Credentials{AccountKey: "a2V5a2V5a2V5"}},
		{name: "azure sas", loc: azloc, cred: datastore.Credentials{SASToken: "sv=2024&sig=abc"}},
		{name: "azure service principal", loc: azloc, cred: datastore.Credentials{TenantID: "t", ClientID: "c", ClientSecret: "sp-secret"}},
		{name: "adls gen2 through blob", loc: adls, cred: datastore.Credentials{AccountKey: "a2V5a2V5a2V5"}},
		{name: "gcs emulator unauthenticated", loc: gcs},
		{name: "azure account key not base64", loc: azloc, cred: datastore.Credentials{AccountKey: "not*base64*KEY"}, wantKind: KindInvalid, secret: "not*base64*KEY"},
		{name: "gcs service account not JSON", loc: gcs, cred: datastore.Credentials{ServiceAccountJSON: "{not json SECRETPART"}, wantKind: KindInvalid, secret: "SECRETPART"},
		{name: "azure file share refused", loc: file, wantKind: KindInvalid},
		{name: "no container", loc: noContainer, wantKind: KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Open(t.Context(), tt.loc, tt.cred)
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer b.Close()
				if got := b.Location(); got != tt.loc {
					t.Errorf("Location() = %+v, want %+v", got, tt.loc)
				}
				return
			}
			var oe *Error
			if !errors.As(err, &oe) {
				t.Fatalf("Open: got %v, want an *Error", err)
			}
			if oe.Kind != tt.wantKind {
				t.Errorf("Kind = %q, want %q (%v)", oe.Kind, tt.wantKind, err)
			}
			if !strings.Contains(err.Error(), tt.loc.String()) {
				t.Errorf("message %q does not name %q", err, tt.loc.String())
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("message %q holds the secret", err)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	got := Redact("GET http://h/c?sv=1&sig=XYZ failed", []string{"", "sv=1&sig=XYZ"})
	if want := "GET http://h/c?[REDACTED] failed"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}
