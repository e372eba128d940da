package spec

import "testing"

// isolated (issue 17): a cluster's, or a serverless size's, runs get nodes of their own.
func TestParseComputeIsolated(t *testing.T) {
	s, _, _, err := parseComputeT(t, poolOK+"size: local-quarter\nmax_instances: 2\nisolated: true\n")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Cluster.Isolated {
		t.Errorf("cluster isolated: true decoded as %+v", s.Cluster)
	}
	s, _, _, err = parseComputeT(t, "type: serverless\nsizes: [local-half, {name: local-quarter, isolated: true}]\n")
	if err != nil {
		t.Fatal(err)
	}
	if z := s.Serverless.Sizes; z[0].Isolated || !z[1].Isolated {
		t.Errorf("serverless sizes = %+v, want local-quarter isolated only", z)
	}
	s, _, _, err = parseComputeT(t, poolOK, "isolated=true")
	if err != nil || !s.Cluster.Isolated {
		t.Errorf("--set isolated=true: %v, %+v", err, s)
	}
}

func TestParseComputeIsolatedErrors(t *testing.T) {
	tests := []struct{ name, yml, want string }{
		{"cluster not a boolean", poolOK + "isolated: always\n",
			`compute.yml: isolated: expected boolean, got "always" (line 3)`},
		{"serverless size not a boolean", "type: serverless\nsizes:\n  - {name: a1, isolated: 1}\n",
			"compute.yml: sizes[0].isolated: expected boolean, got 1 (line 3)"},
		{"instance has no isolated", ciOK + "isolated: true\n",
			"compute.yml: isolated: unknown field (line 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := parseComputeT(t, tt.yml)
			checkErr(t, err, tt.want)
		})
	}
}
