package supervisor

import "testing"

// A uri_file output's file takes the last part of its datastore path, as on Azure (a pipeline's
// hello_world.txt), with ${{name}} and ${{output_name}} read; without a path, the output's name.
func TestOutputFileName(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"", "out"},
		{"azureml://datastores/workspaceblobstore/paths/${{name}}/hello_world.txt", "hello_world.txt"},
		{"azureml://datastores/workspaceblobstore/paths/x/${{name}}.csv", "run1.csv"},
		{"azureml://datastores/workspaceblobstore/paths/x/${{output_name}}.json", "out.json"},
		{"azureml://datastores/workspaceblobstore/paths/rows/", "rows"},
		{"azureml://datastores/workspaceblobstore/paths/", "out"},
		{"azureml://datastores/workspaceblobstore/paths/a/..", "out"},
	} {
		if got := outputFileName("out", tt.path, "run1"); got != tt.want {
			t.Errorf("outputFileName(out, %q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
