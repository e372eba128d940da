package supervisor

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRetagGathersEachRanksLines(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"whole lines", "[1,0]<stdout>:a\n[1,1]<stderr>:b\n", "[rank 0] a\n[rank 1] b\n"},
		{"a print's text and newline apart, interleaved",
			"[1,0]<stdout>:rank 0 says[1,1]<stdout>:rank 1 says\n[1,0]<stdout>:\n",
			"[rank 1] rank 1 says\n[rank 0] rank 0 says\n"},
		{"several lines in one chunk", "[2,3]<stdout>:x\ny\n", "[rank 3] x\n[rank 3] y\n"},
		{"mpirun's own output", "mpirun: warning\n[1,0]<stdout>:ok\n", "mpirun: warning\n[rank 0] ok\n"},
		{"unfinished lines at the end", "[1,1]<stdout>:late[1,0]<stdout>:early", "[rank 0] early\n[rank 1] late\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time too: tags cut between reads.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				got, err := io.ReadAll(retag(r))
				if err != nil || string(got) != tt.want {
					t.Errorf("retag(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
			}
		})
	}
}
