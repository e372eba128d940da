package backendtest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/backend"
	"github.com/hangar-ml/hangar/internal/job"
)

func TestFake(t *testing.T) {
	ctx := t.Context()
	f := New()
	h, err := f.Submit(ctx, backend.Launch{RunID: "r1", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	h2, err := f.Submit(ctx, backend.Launch{RunID: "r1", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if string(h) != string(h2) || string(h) != string(HandleFor("r1")) {
		t.Errorf("handles %s and %s differ, or differ from HandleFor", h, h2)
	}
	st, err := f.Status(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(backend.Status{Alive: true}, st); diff != "" {
		t.Errorf("default status (-want +got):\n%s", diff)
	}
	exit := 2
	want := backend.Status{Final: &job.Result{State: "Failed", ExitCode: &exit}}
	f.SetStatus("r1", want)
	if st, err = f.Status(ctx, h); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status after SetStatus (-want +got):\n%s", diff)
	}
	if err := f.Cancel(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Status(ctx, []byte(`{}`)); err == nil {
		t.Error("Status accepted a foreign handle")
	}
	boom := errors.New("boom")
	f.FailSubmit(boom)
	if _, err := f.Submit(ctx, backend.Launch{RunID: "r2"}); !errors.Is(err, boom) {
		t.Errorf("Submit = %v, want %v", err, boom)
	}
	got := [][]string{f.Submitted(), f.StatusCalls(), f.Canceled()}
	if diff := cmp.Diff([][]string{{"r1", "r1", "r2"}, {"r1", "r1"}, {"r1"}}, got); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
	if tok := f.Launches()[0].Token; tok != "tok" {
		t.Errorf("launch token %q", tok)
	}
}
