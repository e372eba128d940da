package spec

import (
	"strings"
	"testing"
)

// Azure's connection and import files (Azure/azureml-examples cli/resources/connections and
// cli/assets/data), unchanged.
const (
	azureS3Connection = `name: test_s3_conn_data_transfer
type: s3
target: https://bucket-name.s3.region-code.amazonaws.com/key-name
credentials:
  type: access_key
  access_key_id: dummy
  secret_access_key: dummy
`
	azureSQLConnection = `$schema: http://azureml/sdk-2-0/Connection.json

type: azure_sql_db
name: my_sqldb_connection

target: Server=tcp:<myservername>,<port>;Database=<mydatabase>;Trusted_Connection=False;Encrypt=True;Connection Timeout=30
credentials:
    type: username_password
    username: <username>
    password: <password>
`
	azureSnowflakeConnection = `$schema: http://azureml/sdk-2-0/Connection.json
type: snowflake
name: my_snowflakedb_connection # add your datastore name here

target: jdbc:snowflake://<myaccount>.snowflakecomputing.com/?db=<mydb>&warehouse=<mywarehouse>&role=<myrole>
credentials:
    type: username_password
    username: <username>
    password: <password>
`
	azureS3Import = `$schema: http://azureml/sdk-2-0/DataImport.json
type: uri_folder
name: s3_sample
source:
  type: file_system
  path: myfiles/titanic.csv
  connection: azureml:my_s3_connection
path: azureml://datastores/workspaceblobstore/paths/s3/${{name}}
`
	azureSQLImport = `$schema: http://azureml/sdk-2-0/DataImport.json
type: mltable
name: azuresql_sample
source:
  type: database
  query: select * from my_table
  connection: azureml:my_sqldb_connection
path: azureml://datastores/workspaceblobstore/paths/azuresql/${{name}}`
)

func TestParseConnectionAzureFiles(t *testing.T) {
	c, cred, _, err := ParseConnection("s3.yml", []byte(azureS3Connection), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != "s3" || c.CredentialType != "access_key" || cred.SecretAccessKey != "dummy" {
		t.Fatalf("got %+v %+v", c, cred)
	}
	for file, want := range map[string]string{
		azureSQLConnection:       "sql.yml: type: connection type azure_sql_db (an Azure SQL database) is not supported: Hangar's connections are s3",
		azureSnowflakeConnection: "sql.yml: type: connection type snowflake (a Snowflake database) is not supported",
	} {
		_, _, _, err := ParseConnection("sql.yml", []byte(file), nil)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "postgresql") {
			t.Errorf("got %v, want %q naming postgresql", err, want)
		}
	}
}

func TestParseConnectionFaults(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: pg\ntype: postgresql\ntarget: postgresql://db/sales\ncredentials:\n  type: username_password\n  username: u\n", "c.yml: credentials.password: required"},
		{"name: pg\ntype: postgresql\ntarget: postgresql://u:p@db/sales\ncredentials:\n  type: username_password\n  username: u\n  password: p\n", "c.yml: target: a user or password in the target"},
		{"name: pg\ntype: postgresql\ntarget: postgresql://db/sales\ncredentials:\n  type: access_key\n", "c.yml: credentials.type: \"access_key\": a postgresql connection takes credentials of type username_password"},
		{"name: pg\ntype: postgresql\ntarget: postgresql://db/sales\ncredentials:\n  typ: username_password\n", "credentials.typ: unknown field"},
		{"type: s3\ntarget: bkt\ncredentials: {type: access_key, access_key_id: k, secret_access_key: s}\n", "c.yml: name: required"},
	} {
		_, _, _, err := ParseConnection("c.yml", []byte(tc.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), ": p\n") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func TestParseDataImport(t *testing.T) {
	s, _, err := ParseDataImport("i.yml", []byte(azureS3Import), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source.Connection != "my_s3_connection" || s.Source.Path != "myfiles/titanic.csv" || s.Type != "uri_folder" {
		t.Fatalf("got %+v", s)
	}
	s, _, err = ParseDataImport("i.yml", []byte(azureSQLImport), nil)
	if err != nil || s.Source.Query != "select * from my_table" || s.Source.Type != "database" {
		t.Fatalf("got %+v, %v", s, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"type: mltable\nname: a\nsource: {type: database, connection: azureml:pg}\n", "i.yml: source.query: required"},
		{"type: uri_folder\nname: a\nsource: {type: database, query: select 1, connection: pg}\n", "i.yml: type: a database source is imported as a table: use type mltable"},
		{"type: mltable\nname: a\npath: azureml://datastores/other/paths/x\nsource: {type: database, query: select 1, connection: pg}\n", "i.yml: path: azureml://datastores/other/paths/x: an import is written to workspaceblobstore"},
		{"type: mltable\nname: a\nsource: {type: database, query: select 1}\n", "i.yml: source.connection: required"},
	} {
		_, _, err := ParseDataImport("i.yml", []byte(tc.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
