package supervisor

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
)

// cachedModel puts the files in the supervisor's node cache as a manifest and returns its hash,
// as the server hands a deployment's registered model to a replica.
func cachedModel(t *testing.T, s *Supervisor, files map[string]string) string {
	t.Helper()
	src := t.TempDir()
	writeTree(t, src, files)
	m, err := snapshot.FromDir(t.Context(), src, s.cache)
	if err != nil {
		t.Fatal(err)
	}
	b, hash, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.cache.PutBytes(b); err != nil {
		t.Fatal(err)
	}
	return hash
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// walk lists what os.walk (and filepath.WalkDir) finds under root without following a link:
// the files, relative to root.
func walk(t *testing.T, root string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			t.Errorf("%s is a symbolic link; a walk that follows none does not enter it", p)
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// A deployment's model, for a replica and for a batch deployment's job, is materialized where
// Azure lays it out: real folders under AZUREML_MODEL_DIR (the registered folder's name, or the
// files directly for a one-file model), read-only, which a walk that follows no link finds.
func TestModelDirIsRealFolders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		folder string
		files  map[string]string
		want   []string
	}{
		{"replica, folder model", "model", map[string]string{"weights.json": "{}", "sub/vocab.txt": "a"},
			[]string{"model/sub/vocab.txt", "model/weights.json"}},
		{"batch, folder model", "model", map[string]string{"weights.json": "{}"}, []string{"model/weights.json"}},
		{"replica, one-file model", "", map[string]string{"model.pkl": "x"}, []string{"model.pkl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSupervisor(t, "http://127.0.0.1:1", 0)
			hash := cachedModel(t, s, tc.files)
			s.spec.Spec = job.Spec{Inputs: map[string]job.Input{"model": {Type: job.URIFolder, Manifest: hash}}}
			if tc.name[:5] == "batch" {
				s.spec.Spec.Parallel = &job.ParallelRun{ModelInput: "model", ModelFolder: tc.folder}
			} else {
				s.spec.Spec.Serve = &job.Serve{ModelInput: "model", ModelFolder: tc.folder}
			}
			values, env := map[string]string{}, map[string]string{}
			if err := s.inputs.prepare(t.Context(), s.source(), values, env); err != nil {
				t.Fatal(err)
			}
			dir, err := s.inputs.modelDir(values["inputs.model"], tc.folder)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, walk(t, dir)); diff != "" {
				t.Errorf("files a walk of AZUREML_MODEL_DIR finds (-want +got):\n%s", diff)
			}
			fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tc.want[0])))
			if err != nil || fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("the model's file %s: %v, %v; want it read-only", tc.want[0], fi.Mode(), err)
			}
		})
	}
}

// A model folder that is not one folder's name is refused before anything is written.
func TestModelDirRefusesBadFolder(t *testing.T) {
	s := newTestSupervisor(t, "http://127.0.0.1:1", 0)
	for _, f := range []string{"../x", "a/b", ".", ".."} {
		s.spec.Spec = job.Spec{Serve: &job.Serve{ModelInput: "model", ModelFolder: f}}
		if _, err := s.inputs.dir("model"); err == nil {
			t.Errorf("folder %q: no error", f)
		}
	}
	if _, err := s.inputs.modelDir("/elsewhere/model", "model"); err == nil {
		t.Error("a model materialized elsewhere than its place: no error")
	}
}
