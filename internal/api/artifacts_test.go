package api

import "testing"

func TestCollectedLogDir(t *testing.T) {
	for p, want := range map[string]string{
		"user_logs": "user_logs", "user_logs/std_log.txt": "user_logs", "system_logs/node_1/a": "system_logs",
		"user_logs2/x": "", "outputs/user_logs/x": "", "logs/x": "", "": "",
	} {
		if got, ok := CollectedLogDir(p); got != want || ok != (want != "") {
			t.Errorf("CollectedLogDir(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
}
