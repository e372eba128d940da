package spec

import "testing"

// join_timeout (Hangar): seconds or an ISO duration, 0 when absent (the controller's default).
func TestClusterJoinTimeout(t *testing.T) {
	for yml, want := range map[string]int64{
		poolOK:                          0,
		poolOK + "join_timeout: 45\n":   45,
		poolOK + "join_timeout: PT3M\n": 180,
	} {
		s, _, _, err := parseComputeT(t, yml)
		if err != nil {
			t.Fatalf("%q: %v", yml, err)
		}
		if got := s.Cluster.JoinTimeout; got != want {
			t.Errorf("%q: join_timeout %d, want %d", yml, got, want)
		}
	}
	if s, _, _, err := parseComputeT(t, poolOK, "join_timeout=30"); err != nil || s.Cluster.JoinTimeout != 30 {
		t.Errorf("--set join_timeout=30: %+v, %v", s, err)
	}
	for yml, want := range map[string]string{
		poolOK + "join_timeout: soon\n": `compute.yml: join_timeout: expected integer seconds, got "soon" (line 3)`,
		poolOK + "join_timeout: 0\n":    "compute.yml: join_timeout: expected integer seconds > 0, got 0 (line 3)",
		poolOK + "join_timeot: 10\n":    `compute.yml: join_timeot: unknown field; did you mean "join_timeout"? (line 3)`,
	} {
		_, _, _, err := parseComputeT(t, yml)
		checkErr(t, err, want)
	}
}
