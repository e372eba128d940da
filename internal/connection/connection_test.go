package connection

import (
	"strings"
	"testing"
)

func TestParseS3Target(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want S3Target
		err  string
	}{
		{in: "mybucket", want: S3Target{Bucket: "mybucket", Region: DefaultRegion}},
		{in: "s3://mybucket/some/prefix/", want: S3Target{Bucket: "mybucket", Region: DefaultRegion, Prefix: "some/prefix"}},
		{in: "https://bucket-name.s3.eu-west-2.amazonaws.com/key-name", want: S3Target{Bucket: "bucket-name", Region: "eu-west-2", Prefix: "key-name"}},
		{in: "https://bucket-name.s3.amazonaws.com", want: S3Target{Bucket: "bucket-name", Region: DefaultRegion}},
		{in: "https://s3.us-west-1.amazonaws.com/data-bkt/x", want: S3Target{Bucket: "data-bkt", Region: "us-west-1", Prefix: "x"}},
		{in: "http://127.0.0.1:9000/imports/in", want: S3Target{Endpoint: "http://127.0.0.1:9000", Bucket: "imports", Region: DefaultRegion, Prefix: "in"}},
		{in: "", err: "required"},
		{in: "http://127.0.0.1:9000/", err: "names no bucket"},
		{in: "ftp://x/y", err: "scheme ftp"},
		{in: "https://key:secret@host/bkt", err: "is not a bucket"},
		{in: "s3://bkt/a/../b", err: ". and .."},
	} {
		got, err := ParseS3Target(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseS3Target(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseS3Target(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParsePostgresTarget(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{in: "postgresql://db.example.com:5432/sales"},
		{in: "postgres://db/sales?sslmode=disable"},
		{in: "postgresql://bob:pw@db/sales", err: "credentials"},
		{in: "postgresql://db/sales?password=x", err: "parameter password"},
		{in: "postgresql://db/", err: "names no database"},
		{in: "postgresql://db/sales?sslrootcert=/root/.ssh/id_rsa", err: "parameter sslrootcert"},
		{in: "postgresql://db/sales?servicefile=/etc/x&service=y", err: "parameter service"},
		{in: "postgresql://%2Fvar%2Frun%2Fpostgresql/sales", err: "is not a URL"},
		{in: "postgresql://db/sales?host=/var/run/postgresql", err: "parameter host"},
		{in: "postgresql://a,b/sales", err: "not a socket folder or a list"},
		{in: "postgresql://db/sales?sslmode=verify-full&connect_timeout=5"},
		{in: "mysql://db/x", err: "expected postgresql://"},
	} {
		_, err := ParsePostgresTarget(tc.in)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParsePostgresTarget(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestCheck(t *testing.T) {
	pg := Connection{Name: "pg", Type: TypePostgreSQL, Target: "postgresql://h/db"}
	for _, tc := range []struct {
		name  string
		c     Connection
		cred  Credentials
		field string
		msg   string
	}{
		{"ok", pg, Credentials{Type: CredUsernamePassword, Username: "u", Password: "p"}, "", ""},
		{"snowflake", Connection{Name: "s", Type: "snowflake"}, Credentials{}, "type", "s3 (an S3 bucket"},
		{"azure sql", Connection{Name: "s", Type: "azure_sql_db"}, Credentials{}, "type", "an Azure SQL database"},
		{"wrong credentials", pg, Credentials{Type: CredAccessKey}, "credentials.type", "username_password"},
		{"no password", pg, Credentials{Type: CredUsernamePassword, Username: "u"}, "credentials.password", "required"},
		{"s3 no secret", Connection{Name: "s", Type: TypeS3, Target: "bkt"}, Credentials{Type: CredAccessKey, AccessKeyID: "k"}, "credentials.secret_access_key", "required"},
	} {
		faults := Check(tc.c, tc.cred)
		if tc.field == "" {
			if len(faults) != 0 {
				t.Errorf("%s: %v", tc.name, faults)
			}
			continue
		}
		if len(faults) == 0 || faults[0].Field != tc.field || !strings.Contains(faults[0].Msg, tc.msg) {
			t.Errorf("%s: got %v, want %s: ...%s...", tc.name, faults, tc.field, tc.msg)
		}
	}
}

func TestValuesHidePasswords(t *testing.T) {
	v := Credentials{Type: CredUsernamePassword, Username: "u", Password: "pw"}.Values()
	if len(v) != 1 || v[0] != "pw" {
		t.Fatalf("Values = %v", v)
	}
}
