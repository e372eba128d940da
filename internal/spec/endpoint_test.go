package spec

import (
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/serving"
)

func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		sets      []string
		want      *serving.Endpoint
	}{
		{"defaults", "name: my-endpoint\n", nil, &serving.Endpoint{Name: "my-endpoint", AuthMode: "key"}},
		{"kubernetes", "name: my-endpoint\ntype: kubernetes\ncompute: azureml:k8s-target\nauth_mode: AMLToken\n", nil,
			&serving.Endpoint{Name: "my-endpoint", AuthMode: "aml_token", Compute: "k8s-target"}},
		{"traffic", "name: my-endpoint\ntraffic:\n  blue: 90\n  green: 10\nmirror_traffic:\n  shadow: 20\n", nil,
			&serving.Endpoint{Name: "my-endpoint", AuthMode: "key", Traffic: map[string]int{"blue": 90, "green": 10},
				MirrorTraffic: map[string]int{"shadow": 20}}},
		{"traffic from --set", "name: my-endpoint\n", []string{"traffic.blue=100", "auth_mode=aml_token"},
			&serving.Endpoint{Name: "my-endpoint", AuthMode: "aml_token", Traffic: map[string]int{"blue": 100}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, warnings, err := ParseEndpoint("ep.yml", []byte(tc.yml), t.TempDir(), tc.sets)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("err %v, warnings %q", err, warnings)
			}
			diff(t, e, tc.want)
		})
	}
}

func TestEndpointErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yml string
		want      string
	}{
		{"no name", "auth_mode: key\n", "ep.yml: name: required"},
		{"bad name", "name: \"{{ENDPOINT_NAME}}\"\n", `ep.yml: name: expected an endpoint name of 3 to 32 letters, digits and -, starting with a letter, got "{{ENDPOINT_NAME}}" (line 1)`},
		{"aad", "name: my-endpoint\nauth_mode: aad_token\n", "ep.yml: auth_mode: aad_token (Microsoft Entra ID) is not supported by this workspace; use key or aml_token (line 2)"},
		{"auth", "name: my-endpoint\nauth_mode: password\n", "ep.yml: auth_mode: expected one of key, aml_token, aad_token"},
		{"sum", "name: my-endpoint\ntraffic:\n  blue: 90\n  green: 20\n", "ep.yml: traffic: the percentages add up to 110; they must add up to 100 (or all be 0) (line 3)"},
		{"percent", "name: my-endpoint\ntraffic:\n  blue: 90.5\n", "ep.yml: traffic.blue: expected integer, got 90.5 (line 3)"},
		{"live and mirror", "name: my-endpoint\ntraffic:\n  blue: 100\nmirror_traffic:\n  blue: 10\n", "ep.yml: mirror_traffic.blue: deployment blue also gets live traffic"},
		{"deployment name", "name: my-endpoint\ntraffic:\n  \"a b\": 100\n", `ep.yml: traffic.a b: "a b" is not a deployment name`},
		{"unknown", "name: my-endpoint\ntrafic:\n  blue: 100\n", `ep.yml: trafic: unknown field; did you mean "traffic"? (line 2)`},
		{"arm compute", "name: my-endpoint\ncompute: /subscriptions/x/resourceGroups/y\n", "ep.yml: compute: ARM resource ids are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseEndpoint("ep.yml", []byte(tc.yml), t.TempDir(), nil)
			checkErr(t, err, tc.want)
		})
	}
}

// identity and public_network_access are kept, with a warning (Hangar gives replicas no Azure
// identity and does not restrict who reaches the endpoint); read-only fields are ignored.
func TestEndpointUnusedFields(t *testing.T) {
	yml := "name: my-endpoint\nidentity:\n  type: system_assigned\npublic_network_access: disabled\n" +
		"scoring_uri: https://x/score\nprovisioning_state: Succeeded\n"
	e, warnings, err := ParseEndpoint("ep.yml", []byte(yml), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, e.Extra, map[string]any{"identity": map[string]any{"type": "system_assigned"}, "public_network_access": "disabled"})
	want := []string{
		"ep.yml: identity: kept, no effect: replicas get no Azure identity (line 3)",
		"ep.yml: public_network_access: kept, no effect: the endpoint is reachable wherever the Hangar server is (line 4)",
		"ep.yml: scoring_uri: read-only field ignored (line 5)",
		"ep.yml: provisioning_state: read-only field ignored (line 6)",
	}
	diff(t, strings.Join(warnings, "\n"), strings.Join(want, "\n"))
}
