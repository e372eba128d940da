package cli

import (
	"bytes"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type tsvEndpoint struct {
	Name     string            `json:"name"`
	State    string            `json:"provisioning_state"`
	URI      string            `json:"scoring_uri"`
	Count    int               `json:"instance_count"`
	Ratio    float64           `json:"ratio"`
	Public   bool              `json:"public"`
	Missing  *string           `json:"missing"`
	Traffic  map[string]int    `json:"traffic"`
	Replicas []string          `json:"replicas"`
	Props    map[string]string `json:"properties"`
}

func TestPrintTSV(t *testing.T) {
	ep := tsvEndpoint{Name: "ep-1", State: "Succeeded", URI: "http://h/endpoints/ep-1/score", Count: 2, Ratio: 0.5,
		Public: true, Traffic: map[string]int{"blue": 90, "green": 10}, Replicas: []string{"r1", "r2", "r3"},
		Props: map[string]string{"azureml.onlineendpointid": "id-7"}}
	eps := []tsvEndpoint{ep, {Name: "ep-2", State: "Failed"}}
	tests := []struct {
		name  string
		v     any
		query string
		want  string
	}{
		{"scalar string bare", ep, "scoring_uri", "http://h/endpoints/ep-1/score\n"},
		{"quoted key", ep, `properties."azureml.onlineendpointid"`, "id-7\n"},
		{"integer", ep, "instance_count", "2\n"},
		{"float", ep, "ratio", "0.5\n"},
		{"boolean row", ep, "public", "true\n"},
		{"null prints nothing", ep, "missing", ""},
		{"absent key prints nothing", ep, "no_such_key", ""},
		{"list of scalars one a line", eps, "[].name", "ep-1\nep-2\n"},
		{"first of a list", eps, "[0].name", "ep-1\n"},
		{"filter", eps, "[?provisioning_state=='Failed'].name | [0]", "ep-2\n"},
		{"multi-select hash in written order", eps, "[].{uri: scoring_uri, n: name}", "http://h/endpoints/ep-1/score\tep-1\n\tep-2\n"},
		{"multi-select list: one row an item", ep, "[name, instance_count]", "ep-1\n2\n"},
		{"list in a list row", eps, "[].[name, provisioning_state]", "ep-1\tSucceeded\nep-2\tFailed\n"},
		{"object sorted by key", ep, "traffic", "90\t10\n"},
		{"whole object: sorted keys, list as length, object empty, null None, bool True",
			ep, "", "2\tNone\tep-1\t\tSucceeded\tTrue\t0.5\t3\thttp://h/endpoints/ep-1/score\t\n"},
		{"list of lists", [][]string{{"a", "b"}, {"c"}}, "", "a\tb\nc\n"},
		{"empty list prints nothing", []string{}, "", ""},
		{"nested null in a list row", []any{nil, "x"}, "", "None\nx\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			e := &Env{Stdout: &out, Output: "tsv", Query: tt.query}
			if err := e.printData(tt.v, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("-o tsv --query %q (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestOutputFormat(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"tsv", "tsv", ""}, {"TSV", "tsv", ""}, {"none", "none", ""}, {"jsonc", "json", ""}, {"yamlc", "yaml", ""},
		{"table", "table", ""}, {"xml", "", `--output must be table, json, yaml, tsv or none, not "xml"`},
	}
	for _, tt := range tests {
		got, err := outputFormat(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("outputFormat(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestPrintNone(t *testing.T) {
	var out bytes.Buffer
	e := &Env{Stdout: &out, Output: "none"}
	if err := e.printData(map[string]string{"name": "x"}, nil); err != nil || out.Len() != 0 {
		t.Errorf("-o none printed %q (err %v); want nothing", out.String(), err)
	}
}

func TestQueryKeyOrders(t *testing.T) {
	got := queryKeyOrders("[?a=='x'].{Name: name, Gpus: gpus, z: {b: c, a: d}}")
	want := [][]string{{"Name", "Gpus", "z"}, {"b", "a"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queryKeyOrders (-want +got):\n%s", diff)
	}
}

// With the table format a query's objects are a table of their scalar fields, as az prints them.
func TestPrintTableOfQuery(t *testing.T) {
	sizes := []map[string]any{{"name": "Standard_DS3_v2", "gpus": 0, "family": "DSv2", "id": "x", "tags": map[string]any{}},
		{"name": "Standard_NC6", "gpus": 1, "family": "NC"}}
	tests := []struct {
		query, want string
	}{
		{"[?gpus > `0`].{Name: name, Gpus: gpus}", "Name          Gpus\nStandard_NC6  1\n"},
		{"[].{n: name, f: family}", "N                F\nStandard_DS3_v2  DSv2\nStandard_NC6     NC\n"},
		{"[0]", "Family  Gpus  Name\nDSv2    0     Standard_DS3_v2\n"},
		{"[].name", "Standard_DS3_v2\nStandard_NC6\n"},
		{"[0].tags", "{}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var out bytes.Buffer
			e := &Env{Stdout: &out, Output: "table", Query: tt.query}
			if err := e.printData(sizes, func(io.Writer) error { t.Error("the command's own table was printed"); return nil }); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("--query %q -o table (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}
