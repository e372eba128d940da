package asset

import (
	"strings"
	"testing"
	"time"

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
		{in: "iris:0.0.1", want: Ref{Name: "iris", Version: "0.0.1"}},
		{in: "iris:007", want: Ref{Name: "iris", Version: "7"}},
		{in: "iris:latest", errHas: "latest is a label, not a version (name@latest names the newest data asset)"},
		{in: "iris:-x", errHas: `version "-x": expected letters, digits`},
		{in: "iris", errHas: "give a version (iris:1) or iris@latest"},
		{in: "iris@champion", errHas: "data asset iris@champion: the only label is @latest, got @champion"},
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
	if s := (Ref{Name: "a", Alias: "champion"}).String(); s != "a@champion" {
		t.Errorf("String of an alias ref = %q", s)
	}
	if v := (Ref{Name: "a", Latest: true}).StoreVersion(); v != "latest" {
		t.Errorf("StoreVersion of @latest = %q", v)
	}
}

type item struct{ Key }

func (i item) AssetKey() Key { return i.Key }

func TestLatestAndListingAreGeneric(t *testing.T) {
	k := func(name, version string, archived bool) item {
		return item{Key{Name: name, Version: version, Archived: archived}}
	}
	all := []item{k("b", "1", false), k("a", "2", false), k("a", "10", true), k("a", "9", false), k("gone", "3", true)}
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

// Versions are strings, as Azure's; @latest is the newest created, whatever the strings say, and
// a tie (one instant) goes to the higher integer, then the greater string.
func TestLatestIsTheNewestCreated(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	all := []item{
		{Key{Name: "m", Version: "10", Created: at(1)}},
		{Key{Name: "m", Version: "0.0.1", Created: at(2)}},
		{Key{Name: "m", Version: "2", Created: at(3)}},
		{Key{Name: "m", Version: "v3", Created: at(4), Archived: true}},
		{Key{Name: "t", Version: "9", Created: at(5)}},
		{Key{Name: "t", Version: "10", Created: at(5)}},
		{Key{Name: "t", Version: "b", Created: at(6)}},
		{Key{Name: "t", Version: "a", Created: at(6)}},
	}
	if got, ok := Latest(all[:4]); !ok || got.Version != "2" {
		t.Errorf("Latest of m = %+v, %v; want 2 (created last; v3 is archived)", got, ok)
	}
	var order []string
	for _, v := range Listing(all, "t", false) {
		order = append(order, v.Version)
	}
	if diff := cmp.Diff([]string{"b", "a", "10", "9"}, order); diff != "" {
		t.Errorf("versions of t, newest first (-want +got):\n%s", diff)
	}
	for in, want := range map[string]int64{"12": 12, "0.0.1": 0, "v2": 0, "": 0} {
		if got := Number(in); got != want {
			t.Errorf("Number(%q) = %d, want %d", in, got, want)
		}
	}
}
