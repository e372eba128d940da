package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mini_batch_size is a count of files or a size (1kb = 1024 bytes), in a parallel job as in a
// batch deployment's settings; anything else is refused with its field path.
func TestMiniBatchSize(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "score.py"), []byte("def run(b): return b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		value string
		count int
		bytes int64
		err   string
	}{
		{"4", 4, 0, ""},
		{`"4"`, 4, 0, ""},
		{"10kb", 0, 10 << 10, ""},
		{`"1mb"`, 0, 1 << 20, ""},
		{"100MB", 0, 100 << 20, ""},
		{"1.5 KB", 0, 1536, ""},
		{"2g", 0, 2 << 30, ""},
		{"512b", 0, 512, ""},
		{"10 parsecs", 0, 0, `dep.yml: settings.mini_batch_size: "10 parsecs" is not a count or a size like "10kb" (line 8)`},
		{"0kb", 0, 0, `"0kb" is not a count or a size`},
		{"0", 0, 0, "settings.mini_batch_size: expected integer >= 1, got 0"},
		{"-3kb", 0, 0, `"-3kb" is not a count or a size`},
	}
	const base = "name: dep1\nendpoint_name: ep1\ntype: model\nmodel: azureml:m:1\ncompute: azureml:c1\n" +
		"environment: {image: python:3.12}\ncode_configuration: {code: ., scoring_script: score.py}\n"
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			d, _, err := ParseBatchDeployment(filepath.Join(dir, "dep.yml"), []byte(base+"settings: {mini_batch_size: "+tt.value+"}\n"), dir, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Settings.MiniBatchSize != tt.count || d.Settings.MiniBatchBytes != tt.bytes {
				t.Errorf("count %d bytes %d, want %d and %d", d.Settings.MiniBatchSize, d.Settings.MiniBatchBytes, tt.count, tt.bytes)
			}
		})
	}
}

// partition_keys are column names of an mltable input; on files they are refused.
func TestPartitionKeys(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"src", "data", "table"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const job = "type: parallel\ninputs:\n  files: {type: uri_folder, path: ./data}\n  table: {type: mltable, path: ./table}\n" +
		"input_data: ${{inputs.%s}}\npartition_keys: %s\ntask: {code: ./src, entry_script: score.py}\n"
	tests := []struct{ input, keys, err string }{
		{"table", "[Store, Brand]", ""},
		{"files", "[Store]", `job.yml: partition_keys: input "files" is uri_folder; partitions are of an mltable's rows (line 6)`},
		{"table", "Store", "job.yml: partition_keys: expected a list of column names"},
		{"table", "[Store, Store]", "job.yml: partition_keys[1]: expected a column name, each once"},
	}
	for _, tt := range tests {
		t.Run(tt.input+" "+tt.keys, func(t *testing.T) {
			s, _, err := ParseJob(filepath.Join(dir, "job.yml"), []byte(fmt.Sprintf(job, tt.input, tt.keys)), dir, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.Parallel.PartitionKeys, ","); got != "Store,Brand" {
				t.Errorf("partition keys %q", got)
			}
		})
	}
}
