package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

func createArtifactRun(t *testing.T, s *Store, id string) {
	t.Helper()
	r := &job.Run{ID: id, Compute: "local", Status: job.Queued, CreatedAt: time.Unix(1700000000, 0).UTC(),
		Spec: job.Spec{Type: "command", Command: "true"}, Attempt: 1}
	if err := s.RunWrites.CreateRun(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

func putArtifact(t *testing.T, s *Store, run, p string, size int64) error {
	t.Helper()
	return s.Tracking.PutMLflowArtifact(t.Context(), MLflowArtifact{RunID: run, Path: p, Hash: strings.Repeat("ab", 32),
		Size: size, CreatedAt: time.Unix(1700000000, 0)})
}

func TestMLflowArtifactsPutReplaceGet(t *testing.T) {
	s := open(t)
	createArtifactRun(t, s, "r")
	if err := putArtifact(t, s, "r", "model/weights.bin", 10); err != nil {
		t.Fatal(err)
	}
	if err := putArtifact(t, s, "r", "model/weights.bin", 20); err != nil {
		t.Fatalf("re-upload: %v", err)
	}
	a, err := s.Tracking.MLflowArtifact(t.Context(), "r", "model/weights.bin")
	if err != nil || a.Size != 20 {
		t.Fatalf("artifact = %+v, %v; want the re-upload (size 20)", a, err)
	}
	if _, err := s.Tracking.MLflowArtifact(t.Context(), "r", "model"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a directory read as a file: %v, want ErrNotFound", err)
	}
}

// A name is a file or a directory, never both: the local file system MLflow writes to refuses
// the same, and a listing could not show both.
func TestMLflowArtifactsFileOrDirectory(t *testing.T) {
	s := open(t)
	createArtifactRun(t, s, "r")
	for _, p := range []string{"a/b/c.txt", "f"} {
		if err := putArtifact(t, s, "r", p, 1); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a", "a/b", "f/g", "f/g/h"} {
		if err := putArtifact(t, s, "r", p, 1); !errors.Is(err, ErrPathTaken) {
			t.Errorf("put %s = %v, want ErrPathTaken", p, err)
		}
	}
	for _, p := range []string{"a.txt", "a0", "a/b.txt", "ff"} {
		if err := putArtifact(t, s, "r", p, 1); err != nil {
			t.Errorf("put %s (beside, not below): %v", p, err)
		}
	}
}

func TestMLflowArtifactChildren(t *testing.T) {
	s := open(t)
	createArtifactRun(t, s, "r")
	createArtifactRun(t, s, "other")
	for _, p := range []string{"d.txt", "d/x", "d/y/z", "d0", "e", "dir/sub/deep/file", "dir/top"} {
		if err := putArtifact(t, s, "r", p, int64(len(p))); err != nil {
			t.Fatal(err)
		}
	}
	if err := putArtifact(t, s, "other", "secret", 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir, after string
		limit      int
		want       []ArtifactEntry
	}{
		{"", "", 100, []ArtifactEntry{{Name: "d.txt", Size: 5}, {Name: "d", IsDir: true}, {Name: "d0", Size: 2},
			{Name: "dir", IsDir: true}, {Name: "e", Size: 1}}},
		{"", "", 2, []ArtifactEntry{{Name: "d.txt", Size: 5}, {Name: "d", IsDir: true}}},
		{"", "d/", 2, []ArtifactEntry{{Name: "d0", Size: 2}, {Name: "dir", IsDir: true}}},
		{"", "dir/", 2, []ArtifactEntry{{Name: "e", Size: 1}}},
		{"d", "", 100, []ArtifactEntry{{Name: "x", Size: 3}, {Name: "y", IsDir: true}}},
		{"dir", "", 100, []ArtifactEntry{{Name: "sub", IsDir: true}, {Name: "top", Size: 7}}},
		{"nothing", "", 100, nil},
	} {
		got, err := s.Tracking.MLflowArtifactChildren(t.Context(), "r", tc.dir, tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("children of %q after %q (-want +got):\n%s", tc.dir, tc.after, diff)
		}
	}
}

// A directory of many subdirectories, each of many files, lists its subdirectories whole,
// across the batches the walk reads.
func TestMLflowArtifactChildrenAcrossBatches(t *testing.T) {
	s := open(t)
	createArtifactRun(t, s, "r")
	var want []ArtifactEntry
	for i := range 5 {
		name := fmt.Sprintf("sub%d", i)
		want = append(want, ArtifactEntry{Name: name, IsDir: true})
		for j := range listBatch + 3 {
			if err := putArtifact(t, s, "r", fmt.Sprintf("%s/f%04d", name, j), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.Tracking.MLflowArtifactChildren(t.Context(), "r", "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	files, err := s.Tracking.MLflowArtifactChildren(t.Context(), "r", "sub1", "", 1000)
	if err != nil || len(files) != listBatch+3 {
		t.Errorf("files of sub1: %d, %v; want %d", len(files), err, listBatch+3)
	}
}

func TestMLflowArtifactsDeleteAndCascade(t *testing.T) {
	path := testDSN(t)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	createArtifactRun(t, s, "r")
	for _, p := range []string{"d/x", "d/y/z", "d.txt", "d0"} {
		if err := putArtifact(t, s, "r", p, 1); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Tracking.DeleteMLflowArtifacts(t.Context(), "r", "d")
	if err != nil || n != 2 {
		t.Fatalf("delete d = %d, %v; want 2 (d/x, d/y/z)", n, err)
	}
	got, _ := s.Tracking.MLflowArtifactChildren(t.Context(), "r", "", "", 10)
	if diff := cmp.Diff([]ArtifactEntry{{Name: "d.txt", Size: 1}, {Name: "d0", Size: 1}}, got); diff != "" {
		t.Errorf("after delete (-want +got):\n%s", diff)
	}
	if _, err := s.db.ExecContext(t.Context(), `DELETE FROM runs WHERE id = ?`, "r"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM mlflow_artifacts`).Scan(&left); err != nil || left != 0 {
		t.Errorf("rows left after the run was deleted: %d, %v", left, err)
	}
}

// The whole list of a run's uploaded files, in path order, or ErrTooMany: never part of it.
func TestMLflowArtifactFiles(t *testing.T) {
	s := open(t)
	createArtifactRun(t, s, "r")
	createArtifactRun(t, s, "other")
	for _, p := range []string{"b/c.txt", "a.txt", "b/a.txt"} {
		if err := putArtifact(t, s, "r", p, 3); err != nil {
			t.Fatal(err)
		}
	}
	if err := putArtifact(t, s, "other", "z.txt", 1); err != nil {
		t.Fatal(err)
	}
	got, err := s.Tracking.MLflowArtifactFiles(t.Context(), "r", 3)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, a := range got {
		paths = append(paths, a.Path)
	}
	if strings.Join(paths, ",") != "a.txt,b/a.txt,b/c.txt" {
		t.Errorf("files %v", paths)
	}
	if _, err := s.Tracking.MLflowArtifactFiles(t.Context(), "r", 2); !errors.Is(err, ErrTooMany) {
		t.Errorf("limit 2 of 3 files: %v, want ErrTooMany", err)
	}
}
