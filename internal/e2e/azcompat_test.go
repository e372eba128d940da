package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/testwait"
)

// TestAzScriptsRunUnchanged runs shell scripts written as Azure ML's CLI examples are (bash,
// set -e, `X=$(az ml ... --query ... -o tsv)`, flag-only creates, --set updates, deletes with
// --yes --no-wait: testdata/azscripts) with `az` on PATH being the hangar binary (a link named
// az), each against a workspace of its own, and reads what they print: each construct is
// checked against what the workspace holds. It logs how many pass (BENCHMARKS.md records it).
func TestAzScriptsRunUnchanged(t *testing.T) {
	t.Parallel()
	requireTool(t, "bash")
	requireTool(t, "python3")
	var mu sync.Mutex
	passed, total := 0, 0
	t.Run("scripts", func(t *testing.T) {
		for _, s := range azScripts {
			t.Run(s.file, func(t *testing.T) {
				t.Parallel()
				w := newWS(t)
				out, r := w.azScript(s.file)
				if r.code != 0 {
					t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", s.file, r.code, r.stdout, r.stderr)
				}
				c := w.client()
				for _, k := range s.constructs {
					err := k.check(t.Context(), azRun{out: out, stderr: r.stderr, c: c, w: w})
					if err != nil {
						t.Errorf("%s: %s: %v", s.file, k.name, err)
					}
					mu.Lock()
					total++
					if err == nil {
						passed++
					}
					mu.Unlock()
				}
			})
		}
	})
	t.Logf("az ml script compatibility: %d of %d constructs", passed, total)
}

// azScript is one script of testdata/azscripts and the constructs it uses.
type azScript struct {
	file       string
	constructs []azConstruct
}

type azConstruct struct {
	name  string
	check func(ctx context.Context, r azRun) error
}

// azRun is what a script printed: its "name: value" lines (a name may repeat), its stderr, and
// the workspace to compare with.
type azRun struct {
	out    map[string][]string
	stderr string
	c      *api.Client
	w      *ws
}

// one is the value of the only line named name.
func (r azRun) one(name string) string {
	if v := r.out[name]; len(v) == 1 {
		return v[0]
	}
	return fmt.Sprintf("<%d lines named %q>", len(r.out[name]), name)
}

// want says whether the line named name holds want.
func (r azRun) want(name, want string) error {
	if got := r.one(name); got != want {
		return fmt.Errorf("%s: %q, want %q", name, got, want)
	}
	return nil
}

var azScripts = []azScript{
	{"jobs.sh", []azConstruct{
		{"az login, account set, configure --defaults and extension add are no-ops that say so", func(_ context.Context, r azRun) error {
			for _, note := range []string{"note: az login does nothing here", "note: az account set does nothing here",
				"note: az configure does nothing here", "note: az extension add does nothing here"} {
				if !strings.Contains(r.stderr, note) {
					return fmt.Errorf("stderr lacks %q", note)
				}
			}
			return r.want("setup", "done")
		}},
		{"job create --query name -o tsv prints the bare name", func(ctx context.Context, r azRun) error {
			_, err := r.c.Jobs.Get(ctx, r.one("job"))
			return err
		}},
		{"--set a=1 b=2 on create adds a tag beside the file's and a new input", func(ctx context.Context, r azRun) error {
			d, err := r.c.Jobs.Get(ctx, r.one("job"))
			if err != nil {
				return err
			}
			if d.Tags["team"] != "ml" || d.Tags["stage"] != "dev" || d.Spec.Inputs["extra"].Value != "5" {
				return fmt.Errorf("tags %v, input extra %+v; want team=ml and stage=dev, extra 5", d.Tags, d.Spec.Inputs["extra"])
			}
			return nil
		}},
		{"job show --query status -o tsv", func(ctx context.Context, r azRun) error {
			d, err := r.c.Jobs.Get(ctx, r.one("job"))
			if err != nil {
				return err
			}
			return r.want("status", string(d.Status))
		}},
		{"--resource-group and --workspace-name are ignored", func(_ context.Context, r azRun) error {
			return r.want("tags", "dev ml")
		}},
		{"job download --output-name --download-path", func(_ context.Context, r azRun) error {
			return r.want("output", "hello")
		}},
		{"job list --parent-job-name --query \"[].name\" -o tsv, one name a line", func(ctx context.Context, r azRun) error {
			pipeline, _, _ := strings.Cut(r.one("pipeline"), " ")
			p, err := r.c.Jobs.PipelineSteps(ctx, pipeline)
			if err != nil {
				return err
			}
			var want, got []string
			for _, s := range p.Steps {
				want = append(want, s.RunID+" Completed")
			}
			got = append(got, r.out["step"]...)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) || len(got) != 2 {
				return fmt.Errorf("steps %q, want %q", got, want)
			}
			return nil
		}},
		{"job list --query \"[0].name\" -o tsv", func(ctx context.Context, r azRun) error {
			p, err := r.c.Jobs.ListPage(ctx, api.JobListQuery{Limit: 1})
			if err != nil || len(p.Runs) != 1 {
				return fmt.Errorf("list: %v", err)
			}
			return r.want("first", p.Runs[0].ID)
		}},
		{"workspace show --query mlflow_tracking_uri -o tsv", func(_ context.Context, r azRun) error {
			return r.want("tracking", r.c.BaseURL())
		}},
		{"an az group other than ml is refused", func(_ context.Context, r azRun) error {
			return r.want("other groups", "refused")
		}},
	}},
	{"online.sh", []azConstruct{
		{"online-endpoint create -n --auth-mode key, with no file", func(_ context.Context, r azRun) error {
			return r.want("endpoint", "Succeeded")
		}},
		{"online-deployment create --endpoint (a prefix of --endpoint-name) --set a=1 b=2", func(_ context.Context, r azRun) error {
			return r.want("deployment", "Succeeded")
		}},
		{"online-deployment update --set instance_count=2, with no file", func(_ context.Context, r azRun) error {
			return r.want("instances", "2")
		}},
		{"online-endpoint show --query scoring_uri -o tsv", func(_ context.Context, r azRun) error {
			return r.want("scoring_uri", r.c.BaseURL()+"/endpoints/az-compat-endpoint/score")
		}},
		{"online-endpoint get-credentials -o tsv --query primaryKey opens the scoring URI", func(_ context.Context, r azRun) error {
			if k := r.one("key"); len(k) < 20 || strings.ContainsAny(k, " \t\"") {
				return fmt.Errorf("key %q is not a bare key", k)
			}
			return r.want("with key", `{"y": 21, "deployment": "blue"}`)
		}},
		{"online-endpoint invoke --request-file", func(_ context.Context, r azRun) error {
			return r.want("invoke", `{"y": 21, "deployment": "blue"}`)
		}},
		{"online-deployment get-logs --endpoint --lines", func(_ context.Context, r azRun) error {
			if n := r.one("logs"); n == "0" || n == "" {
				return fmt.Errorf("get-logs printed %q lines", n)
			}
			return nil
		}},
		{"online-endpoint update --traffic with --set adding a tag", func(_ context.Context, r azRun) error {
			if err := r.want("stage", "prod"); err != nil {
				return err
			}
			return r.want("traffic", "100")
		}},
		{"online-endpoint delete --yes --no-wait", func(ctx context.Context, r azRun) error {
			if _, err := r.c.Endpoints.Get(ctx, r.one("deleted")); !api.IsNotFound(err) {
				return fmt.Errorf("endpoint %s after delete: %v, want not found", r.one("deleted"), err)
			}
			return nil
		}},
	}},
	{"batch.sh", []azConstruct{
		{"compute create -n --type amlcompute --min-instances --max-instances --size, with no file, -o none", func(_ context.Context, r azRun) error {
			return r.want("compute", "batch-cluster")
		}},
		{"compute update --max-instances --idle-time-before-scale-down, with no file", func(_ context.Context, r azRun) error {
			return r.want("max_instances", "2 60")
		}},
		{"batch-endpoint create --name, with no file", func(_ context.Context, r azRun) error {
			return r.want("default", "second")
		}},
		{"batch-deployment create --file --endpoint-name --name --set a=1 b=2", func(_ context.Context, r azRun) error {
			return r.want("deployments", "first second")
		}},
		{"batch-deployment update --set settings.mini_batch_size=2, with no file", func(_ context.Context, r azRun) error {
			return r.want("mini_batch_size", "2")
		}},
		{"batch-endpoint invoke --input --input-type --query name -o tsv", func(_ context.Context, r azRun) error {
			_, status, _ := strings.Cut(r.one("batch job"), " ")
			if status != "Completed" {
				return fmt.Errorf("batch job: %q, want it Completed", r.one("batch job"))
			}
			return r.want("rows", "n1.txt,30 n2.txt,60 n3.txt,90 ")
		}},
		{"batch-endpoint update --set defaults.deployment_name, with no file: invoke runs it", func(ctx context.Context, r azRun) error {
			name, _, _ := strings.Cut(r.one("batch job"), " ")
			d, err := r.c.Jobs.Get(ctx, name)
			if err != nil {
				return err
			}
			if got := d.Tags[serving.TagBatchDeployment]; got != "second" {
				return fmt.Errorf("the batch job ran deployment %q, want second", got)
			}
			return nil
		}},
		{"batch-deployment list-jobs --name --endpoint-name --query \"[].name\" -o tsv", func(_ context.Context, r azRun) error {
			name, _, _ := strings.Cut(r.one("batch job"), " ")
			if err := r.want("list-jobs", name); err != nil {
				return err
			}
			return r.want("first's jobs", "")
		}},
		{"batch-endpoint invoke --output-path --set output_file_name: the rows file has that name, where a later job reads it", func(_ context.Context, r azRun) error {
			if err := r.want("named", "named.csv"); err != nil {
				return err
			}
			return r.want("from datastore", "n1.txt,30 n2.txt,60 n3.txt,90")
		}},
		{"batch-endpoint invoke --mini-batch-size --instance-count, for that job alone", func(ctx context.Context, r azRun) error {
			d, err := r.c.Jobs.Get(ctx, r.one("overridden job"))
			if err != nil {
				return err
			}
			if n := d.Spec.Resources.InstanceCount; n != 2 {
				return fmt.Errorf("the job ran on %d nodes, want 2", n)
			}
			if err := r.want("split", "node 0 of 2: 3 files in 3 mini-batches;node 1 of 2: 3 files in 3 mini-batches"); err != nil {
				return err
			}
			return r.want("stored after", "2 predictions.csv")
		}},
		{"batch-endpoint invoke -d --f inputs.yml (Azure's invocation file)", func(_ context.Context, r azRun) error {
			return r.want("from file", "Completed n1.txt,30 n2.txt,60 n3.txt,90")
		}},
		{"batch-endpoint delete --yes --no-wait", func(ctx context.Context, r azRun) error {
			if _, err := r.c.BatchEndpoints.Get(ctx, "az-compat-batch"); !api.IsNotFound(err) {
				return fmt.Errorf("batch endpoint after delete: %v, want not found", err)
			}
			return nil
		}},
		{"compute delete --yes --no-wait", func(ctx context.Context, r azRun) error {
			testwait.Within(r.w.t, 30*time.Second, "compute batch-cluster to be gone", func() bool {
				_, err := r.c.Computes.Get(ctx, "batch-cluster")
				return api.IsNotFound(err)
			})
			return nil
		}},
	}},
}

// azScript runs testdata/azscripts/<file> with bash in a copy of that folder, with a link named az
// to the hangar binary first on PATH, and returns its "name: value" lines.
func (w *ws) azScript(file string) (map[string][]string, result) {
	w.t.Helper()
	dir := w.t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "azscripts"))); err != nil {
		w.t.Fatal(err)
	}
	bin := w.t.TempDir()
	if err := os.Symlink(hangarBin, filepath.Join(bin, "az")); err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(w.t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", file)
	cmd.Dir = dir
	cmd.Env = append(w.env(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("run %s: %v", file, err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if name, value, ok := strings.Cut(line, ": "); ok {
			out[name] = append(out[name], value)
		} else if name, ok := strings.CutSuffix(line, ":"); ok {
			out[name] = append(out[name], "")
		}
	}
	return out, r
}
