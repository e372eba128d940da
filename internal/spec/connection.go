package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/connection"
)

// connectionKeys are the keys --set may create in a connection file.
var connectionKeys = []string{"name", "type", "target", "description", "tags.*", "credentials.*"}

// ParseConnectionFile reads a workspace connection YAML (Azure's Connection schema): Azure's s3
// type and Hangar's postgresql; the other types (azure_sql_db, snowflake, ...) are refused
// naming what is supported. The credentials come back apart: they are sealed, never shown.
func ParseConnectionFile(file string, sets []string) (*connection.Connection, *connection.Credentials, []string, error) {
	data, err := readSpec(file)
	if err != nil {
		return nil, nil, nil, err
	}
	return ParseConnection(file, data, sets)
}

// ParseConnection is ParseConnectionFile for YAML already read.
func ParseConnection(file string, data []byte, sets []string) (*connection.Connection, *connection.Credentials, []string, error) {
	d, root := begin(file, data, ".", sets, connectionKeys)
	if root == nil {
		return nil, nil, d.warnings, d.errs.err()
	}
	var c connection.Connection
	var cred connection.Credentials
	str := func(dst *string) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) { *dst = strings.TrimSpace(d.str(n, p)) }
	}
	got := d.mapping(root, "", fields{
		"$schema":     nil,
		"name":        str(&c.Name),
		"type":        func(n *yaml.Node, p string) { c.Type = strings.ToLower(strings.TrimSpace(d.str(n, p))) },
		"target":      str(&c.Target),
		"description": func(n *yaml.Node, p string) { c.Description = d.str(n, p) },
		"tags":        func(n *yaml.Node, p string) { c.Tags = d.stringMap(n, p) },
		"credentials": func(n *yaml.Node, p string) {
			d.mapping(n, p, fields{
				"type":              str(&cred.Type),
				"access_key_id":     str(&cred.AccessKeyID),
				"secret_access_key": func(n *yaml.Node, p string) { cred.SecretAccessKey = d.str(n, p) },
				"username":          str(&cred.Username),
				"password":          func(n *yaml.Node, p string) { cred.Password = d.str(n, p) },
			})
		},
	})
	for _, f := range []string{"name", "type", "target", "credentials"} {
		if got[f] == nil {
			d.required(nil, f)
		}
	}
	if len(d.errs) == 0 {
		for _, f := range connection.Check(c, cred) {
			d.errorf(nodeAt(got, f.Field), f.Field, "%s", f.Msg)
		}
	}
	if err := d.errs.err(); err != nil {
		return nil, nil, d.warnings, err
	}
	c.CredentialType = cred.Type
	return &c, &cred, d.warnings, nil
}

// nodeAt is the node of a field path's first key, for its line (nil: none).
func nodeAt(got map[string]*yaml.Node, field string) *yaml.Node {
	top, _, _ := strings.Cut(field, ".")
	return got[top]
}
