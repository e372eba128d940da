package asset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var dataKind = Kind{Noun: "data asset", Collection: "data", Command: "data"}

// The same reference grammar serves every kind; messages and Azure ids use the kind's words.
func TestParseRefPerKind(t *testing.T) {
	tests := []struct {
		in     string
		want   Ref
		errHas string
	}{
		{in: "azureml:iris:3", want: Ref{Name: "iris", Version: "3"}},
		{in: "iris@latest", want: Ref{Name: "iris", Latest: true}},
		{in: "azureml:/subscriptions/s/resourceGroups/g/providers/Microsoft.MachineLearningServices/workspaces/w/data/iris/versions/2",
			want: Ref{Name: "iris", Version: "2"}},
		{in: "azureml:/subscriptions/s/workspaces/w/models/iris/versions/2", errHas: "data asset azureml:/subscriptions/s/workspaces/w/models/iris/versions/2: expected an id ending in /data/<name>/versions/<version>"},
		{in: "azureml://registries/r/data/iris/versions/1", errHas: "register it here with hangar data create"},
		{in: "iris:x", errHas: "data asset versions are numbered 1, 2, 3"},
		{in: "iris", errHas: "give a version (iris:1) or iris@latest"},
		{in: "-iris:1", errHas: `"-iris" is not a data asset name`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := dataKind.ParseRef(tt.in, false)
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
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if v := (Ref{Name: "a", Latest: true}).StoreVersion(); v != "latest" {
		t.Errorf("StoreVersion of @latest = %q", v)
	}
}

type item struct{ Key }

func (i item) AssetKey() Key { return i.Key }

func TestLatestAndListingAreGeneric(t *testing.T) {
	all := []item{{Key{"b", "1", false}}, {Key{"a", "2", false}}, {Key{"a", "10", true}}, {Key{"a", "9", false}}, {Key{"gone", "3", true}}}
	if got, ok := Latest(all); !ok || got.Name != "a" || got.Version != "9" {
		t.Errorf("Latest = %+v, %v; want a:9 (10 is archived, numbers compare as numbers)", got, ok)
	}
	var ids []string
	for _, v := range Listing(all, "", true) {
		ids = append(ids, v.Name+":"+v.Version)
	}
	if diff := cmp.Diff([]string{"a:9", "b:1", "gone:3"}, ids); diff != "" {
		t.Errorf("Listing (-want +got):\n%s", diff)
	}
}
