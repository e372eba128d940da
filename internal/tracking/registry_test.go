package tracking

import (
	"strings"
	"testing"
)

func TestRegistryFilters(t *testing.T) {
	iris := Registered{Attrs: map[string]string{"name": "iris", "run_id": "r1", "source_path": "azureml://jobs/r1/outputs/artifacts/paths/model"},
		Version: 3, Tags: map[string]string{"team": "Vision"}}
	tests := []struct {
		filter   string
		versions bool
		want     bool
		errHas   string
	}{
		{filter: "", want: true},
		{filter: "name = 'iris'", want: true},
		{filter: "name != 'iris'", want: false},
		{filter: "name LIKE 'ir%'", want: true},
		{filter: "name LIKE 'IR%'", want: false},
		{filter: "name ILIKE 'IR_S'", want: true},
		{filter: "attribute.name = \"iris\"", want: true},
		{filter: "tags.team = 'Vision'", want: true},
		{filter: "tag.team ILIKE 'vis%'", want: true},
		{filter: "tags.missing != 'x'", want: false},
		// MLflow's client adds this to every search: a model without the tag matches.
		{filter: "tag.`mlflow.prompt.is_prompt` != 'true'", want: true},
		{filter: "name = 'iris' AND tag.`mlflow.prompt.is_prompt` != 'true'", want: true},
		{filter: "tag.`mlflow.prompt.is_prompt` = 'true'", want: false},
		{filter: "run_id = 'r1'", errHas: "Invalid attribute key 'run_id'"},
		{filter: "metric.acc > 1", errHas: "Invalid entity type 'metric'"},
		{filter: "name = 'a' OR name = 'b'", errHas: "Invalid clause(s)"},
		{filter: "name = iris", errHas: "Expected a quoted string value"},
		{filter: "name IN ('iris')", errHas: "IN is for run_id only"},
		{filter: "version_number >= 3 AND version_number < 4", versions: true, want: true},
		{filter: "version_number = 2", versions: true, want: false},
		{filter: "version_number = '3'", versions: true, errHas: "Expected numeric value"},
		{filter: "run_id IN ('r0', 'r1')", versions: true, want: true},
		{filter: "run_id IN ('r0')", versions: true, want: false},
		{filter: "source_path LIKE '%/paths/model'", versions: true, want: true},
		{filter: "name IN ('iris')", versions: true, errHas: "IN is for run_id only"},
		{filter: "creation_timestamp > 1", versions: true, errHas: "Invalid attribute key"},
	}
	for _, tc := range tests {
		parse := ParseRegisteredModelFilter
		if tc.versions {
			parse = ParseModelVersionFilter
		}
		f, err := parse(tc.filter)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%q: err = %v, want %q", tc.filter, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.filter, err)
			continue
		}
		if got := f.Match(iris); got != tc.want {
			t.Errorf("%q matches = %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func TestRegistryOrders(t *testing.T) {
	keys := func(by []OrderBy) string {
		var s []string
		for _, o := range by {
			d := " ASC"
			if o.Desc {
				d = " DESC"
			}
			s = append(s, o.Key+d)
		}
		return strings.Join(s, ", ")
	}
	tests := []struct {
		terms    []string
		versions bool
		want     string
		errHas   string
	}{
		{want: "name ASC"},
		{terms: []string{"timestamp desc"}, want: "last_updated_timestamp DESC, name ASC"},
		{terms: []string{"name DESC"}, want: "name DESC"},
		{terms: []string{"version_number"}, errHas: "Invalid order by key 'version_number'"},
		{terms: []string{"name", "name DESC"}, errHas: "duplicate fields"},
		{terms: []string{"name sideways"}, errHas: "Could not be parsed"},
		{versions: true, want: "last_updated_timestamp DESC, name ASC, version_number DESC"},
		{versions: true, terms: []string{"version_number ASC"}, want: "version_number ASC, name ASC"},
		{versions: true, terms: []string{"creation_timestamp DESC"}, want: "creation_timestamp DESC, name ASC, version_number DESC"},
	}
	for _, tc := range tests {
		parse := ParseRegisteredModelOrder
		if tc.versions {
			parse = ParseModelVersionOrder
		}
		by, err := parse(tc.terms)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%q: err = %v, want %q", tc.terms, err, tc.errHas)
			}
			continue
		}
		if err != nil || keys(by) != tc.want {
			t.Errorf("%q = %q, %v; want %q", tc.terms, keys(by), err, tc.want)
		}
	}
}
