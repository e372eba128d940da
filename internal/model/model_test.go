package model

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in     string
		bare   bool
		want   Ref
		errHas string
	}{
		{in: "mymodel:1", want: Ref{Name: "mymodel", Version: "1"}},
		{in: "azureml:mymodel:12", want: Ref{Name: "mymodel", Version: "12"}},
		{in: "AzureML:my.model-v_2:007", want: Ref{Name: "my.model-v_2", Version: "7"}},
		{in: "mymodel@latest", want: Ref{Name: "mymodel", Latest: true}},
		{in: "azureml:mymodel@latest", want: Ref{Name: "mymodel", Latest: true}},
		{in: "mymodel", bare: true, want: Ref{Name: "mymodel", Latest: true}},
		{in: "azureml:/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/models/m/versions/3",
			want: Ref{Name: "m", Version: "3"}},
		{in: "mymodel", errHas: "give a version (mymodel:1) or mymodel@latest"},
		{in: "mymodel:v2", want: Ref{Name: "mymodel", Version: "v2"}},
		{in: "mymodel:0.0.1", want: Ref{Name: "mymodel", Version: "0.0.1"}},
		{in: "mymodel:latest", errHas: "latest is a label"},
		{in: "mymodel:v/2", errHas: `version "v/2": expected letters, digits`},
		{in: "mymodel@champion", want: Ref{Name: "mymodel", Alias: "champion"}},
		{in: "azureml:mymodel@prod_2-b", want: Ref{Name: "mymodel", Alias: "prod_2-b"}},
		{in: "mymodel@Latest", errHas: "latest (any case) is reserved"},
		{in: "mymodel@v3", errHas: "v<number> is reserved"},
		{in: "mymodel@", errHas: `alias "": expected letters, digits`},
		{in: "mymodel@a.b", errHas: `alias "a.b": expected letters, digits`},
		{in: "bad name@champion", errHas: "not a model name"},
		{in: "azureml://registries/azureml/models/foo/versions/1", errHas: "Azure ML registry"},
		{in: "azureml:/subscriptions/s/models/m", errHas: "/models/<name>/versions/<version>"},
		{in: "bad name:1", errHas: "not a model name"},
		{in: ":1", errHas: "not a model name"},
		{in: "a/b:1", errHas: "not a model name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRef(tt.in, tt.bare)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("ParseRef(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRef(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseVersionAndType(t *testing.T) {
	for in, want := range map[string]string{"1": "1", " 42 ": "42", "0010": "10", "0": "0", "1.0": "1.0", "v2": "v2"} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "a b", "x:1", "Latest", "99999999999999999999"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
	for in, want := range map[string]string{"": CustomModel, "MLflow_Model": MLflowModel, "triton-model": TritonModel} {
		if got, err := CheckType(in); err != nil || got != want {
			t.Errorf("CheckType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := CheckType("uri_folder"); err == nil || !strings.Contains(err.Error(), "custom_model, mlflow_model, triton_model") {
		t.Errorf("CheckType(uri_folder) = %v", err)
	}
}

func TestListing(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := func(name, version string, archived bool) Version {
		return Version{Name: name, Version: version, Archived: archived, CreatedAt: at}
	}
	all := []Version{
		v("b", "1", false), v("a", "2", false), v("a", "10", true), v("a", "9", false),
		v("gone", "1", true), v("gone", "2", true),
	}
	ids := func(vs []Version) []string {
		var out []string
		for _, x := range vs {
			out = append(out, x.Name+":"+x.Version)
		}
		return out
	}
	tests := []struct {
		name     string
		only     string
		archived bool
		want     []string
	}{
		{name: "latest of each, archived hidden", want: []string{"a:9", "b:1"}},
		{name: "latest of each with archived", archived: true, want: []string{"a:9", "b:1", "gone:2"}},
		{name: "versions of one, numeric order", only: "a", want: []string{"a:9", "a:2"}},
		{name: "versions of one with archived", only: "a", archived: true, want: []string{"a:10", "a:9", "a:2"}},
		{name: "unknown name", only: "zzz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(Listing(all, tt.only, tt.archived))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got, ok := Latest(all[4:]); ok {
		t.Errorf("Latest of archived versions = %v, want none", got)
	}
}
