package main

import (
	"strings"
	"testing"
)

func TestRunPrintsTable(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"-seed", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| policy | node-hours |", "| hangar |", "| fixed-idle 10m0s", "| lower bound"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run([]string{"-tick", "0s"}, &out); err == nil {
		t.Error("want an error for -tick 0s")
	}
}
