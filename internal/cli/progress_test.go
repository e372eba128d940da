package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestProgressWanted(t *testing.T) {
	tests := []struct{ stdout, stderr, want bool }{
		{true, true, true},
		{false, true, false}, // stdout piped (hangar job create -o json | jq): quiet
		{true, false, false}, // stderr to a file: no escape codes in it
		{false, false, false},
	}
	for _, tt := range tests {
		if got := progressWanted(tt.stdout, tt.stderr); got != tt.want {
			t.Errorf("progressWanted(%v, %v) = %v", tt.stdout, tt.stderr, got)
		}
	}
}

// A bar is drawn on a terminal (a pty) and nothing is written elsewhere.
func TestBarDrawsOnATerminalOnly(t *testing.T) {
	var quiet bytes.Buffer
	if b := (&Env{Stdout: &quiet, Stderr: &quiet}).newBar(t.Context(), "upload code", 1000); b != nil {
		t.Error("a bar was made for buffers")
	}
	b := (&Env{Stdout: &quiet, Stderr: &quiet}).newBar(t.Context(), "x", 1)
	b.set(1) // a nil bar takes calls and does nothing
	b.done()

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pty: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen strings.Builder
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			seen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	b = (&Env{Stdout: tty, Stderr: tty}).newBar(t.Context(), "upload code", 2000)
	if b == nil {
		t.Fatal("no bar on a terminal")
	}
	b.set(1000)
	b.done()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		out := seen.String()
		mu.Unlock()
		if strings.Contains(out, "upload code") && strings.Contains(out, "100 %") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminal shows %q; want the bar, complete", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tty.Close()
	if quiet.Len() != 0 {
		t.Errorf("the quiet env got %q", quiet.String())
	}
}
