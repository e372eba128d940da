package supervisor

import (
	"os/exec"
	"syscall"
	"testing"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    int
	}{
		{"success", "exit 0", 0},
		{"failure", "exit 3", 3},
		{"high code", "exit 255", 255},
		{"killed by SIGTERM", "kill -TERM $$", 128 + int(syscall.SIGTERM)},
		{"killed by SIGKILL", "kill -KILL $$", 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", tt.command)
			err := cmd.Run()
			if got := exitCode(cmd, err); got != tt.want {
				t.Errorf("exitCode(bash -c %q) = %d (err %v), want %d", tt.command, got, err, tt.want)
			}
		})
	}
}

func TestExitCodeNotStarted(t *testing.T) {
	cmd := exec.Command("/nonexistent/hangar-test-binary")
	err := cmd.Run()
	if err == nil {
		t.Fatal("a missing binary ran")
	}
	if got := exitCode(cmd, err); got != -1 {
		t.Errorf("exitCode of a command that never started = %d, want -1", got)
	}
}
