package bench

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// Wheelhouse writes a one-package local wheelhouse into dir and returns pip settings that install
// only from it, as an offline node would.
func Wheelhouse(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "tinypkg-1.0-py3-none-any.whl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z := zip.NewWriter(f)
	info := "tinypkg-1.0.dist-info"
	var record strings.Builder
	for _, fl := range [][2]string{
		{"tinypkg/__init__.py", "VALUE = 42\n"},
		{info + "/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: hangar-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	} {
		w, err := z.Create(fl[0])
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(fl[1])); err != nil {
			return nil, err
		}
		sum := sha256.Sum256([]byte(fl[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", fl[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(fl[1]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	w, err := z.Create(info + "/RECORD")
	if err != nil {
		return nil, err
	}
	if _, err := w.Write([]byte(record.String())); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return []string{"PIP_NO_INDEX=1", "PIP_FIND_LINKS=" + dir, "PIP_CONFIG_FILE=" + os.DevNull}, nil
}

// Environments measures the Preparing phase of a job whose conda file installs one package:
// the first build of the environment against a later job reusing it from the node's cache.
// Each repetition uses a new spec (a different channel list), so every first build is real.
func Environments(ctx context.Context, w *Workspace, dir string, reps int) ([]Row, error) {
	var first, cached []time.Duration
	for i := 0; i < reps; i++ {
		d := filepath.Join(dir, fmt.Sprintf("env%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		conda := fmt.Sprintf("channels: [bench-%d]\ndependencies:\n  - python=3\n  - pip:\n    - tinypkg==1.0\n", i)
		job := "command: python -c 'import tinypkg'\nenvironment:\n  conda_file: conda.yml\n"
		if err := os.WriteFile(filepath.Join(d, "conda.yml"), []byte(conda), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "job.yml"), []byte(job), 0o644); err != nil {
			return nil, err
		}
		for k, into := range []*[]time.Duration{&first, &cached} {
			p, err := preparing(ctx, w, filepath.Join(d, "job.yml"), fmt.Sprintf("bench-env-%d-%d", i, k))
			if err != nil {
				return nil, err
			}
			*into = append(*into, p)
		}
	}
	return pair("Preparing, first build of the environment (venv + pip install)", first,
		"Preparing, environment reused from the node's cache", cached), nil
}

// preparing runs a job to its end and returns how long it spent in Preparing.
func preparing(ctx context.Context, w *Workspace, file, name string) (time.Duration, error) {
	if _, err := w.Run(ctx, "job", "create", "-f", file, "--name", name, "--stream"); err != nil {
		return 0, err
	}
	out, err := w.Output(ctx, "job", "show", "-n", name, "-o", "json")
	if err != nil {
		return 0, err
	}
	var d api.RunDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		return 0, err
	}
	return time.Duration(d.Phases["preparing"] * float64(time.Second)), nil
}
