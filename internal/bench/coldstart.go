package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
)

// coldScore is the deployment's scoring script: it loads a small model in init().
const coldScore = `import json, os

def init():
    global W
    with open(os.path.join(os.environ["AZUREML_MODEL_DIR"], "model", "w.json")) as f:
        W = json.load(f)["w"]

def run(raw_data):
    return {"y": W * json.loads(raw_data)["x"]}
`

// ColdStart measures the first answer of a deployment that scaled to zero (min_instances 0)
// against the next answer once its replica is up, in one workspace on the local target. The
// replica's environment is the host's python (nothing to build: a cached environment's case).
// Each round waits until the deployment is back at zero replicas.
func ColdStart(ctx context.Context, w *Workspace, dir string, rounds int) ([]Figure, error) {
	files := map[string]string{
		"model/w.json":   `{"w": 3}`,
		"score/score.py": coldScore,
		"endpoint.yml":   "name: cold\nauth_mode: key\n",
		"zero.yml": "name: zero\nendpoint_name: cold\nmodel: {path: model}\n" +
			"code_configuration: {code: score, scoring_script: score.py}\n" +
			"scale_settings: {type: target_utilization, min_instances: 0, max_instances: 1, scale_down_delay: 1}\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	for _, args := range [][]string{{"online-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml")},
		{"online-deployment", "create", "-f", filepath.Join(dir, "zero.yml"), "--all-traffic"}} {
		if _, err := w.Run(ctx, args...); err != nil {
			return nil, err
		}
	}
	uri, key, err := coldEndpoint(ctx, w)
	if err != nil {
		return nil, err
	}
	var cold, warm []float64
	for range rounds {
		if err := waitZero(ctx, w); err != nil {
			return nil, err
		}
		for _, into := range []*[]float64{&cold, &warm} {
			d, err := scoreOnce(ctx, uri, key)
			if err != nil {
				return nil, err
			}
			*into = append(*into, float64(d.Microseconds())/1000)
		}
	}
	base := Figure{Name: "a request to its running replica (the next one), p50", Value: medianOf(warm), Unit: "ms", Samples: warm}
	return []Figure{base,
		against(base, "first request to a deployment at zero replicas (held while one starts), p50", medianOf(cold), "ms", cold),
		{Name: "first request to a deployment at zero replicas, max (goal ≤ 2,000 ms)", Value: quantile(cold, 1), Unit: "ms"},
	}, nil
}

func coldEndpoint(ctx context.Context, w *Workspace) (string, string, error) {
	out, err := w.Output(ctx, "online-endpoint", "show", "-n", "cold", "-o", "json")
	if err != nil {
		return "", "", err
	}
	var v api.EndpointView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return "", "", err
	}
	out, err = w.Output(ctx, "online-endpoint", "get-credentials", "-n", "cold", "-o", "json")
	if err != nil {
		return "", "", err
	}
	var k api.EndpointKeys
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		return "", "", err
	}
	return v.ScoringURI, k.PrimaryKey, nil
}

// waitZero waits until the deployment has no replica that is not over.
func waitZero(ctx context.Context, w *Workspace) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := w.Output(ctx, "online-deployment", "show", "-n", "zero", "-e", "cold", "-o", "json")
		if err != nil {
			return err
		}
		var v api.DeploymentView
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			return err
		}
		live := 0
		for _, r := range v.Replicas {
			if r.Status != "Canceled" && r.Status != "Failed" && r.Status != "Completed" {
				live++
			}
		}
		if live == 0 {
			return nil
		}
	}
	return fmt.Errorf("the deployment did not scale back to zero in 2 minutes")
}

func scoreOnce(ctx context.Context, uri, key string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, strings.NewReader(`{"x": 2}`))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"y": 6`) && !strings.Contains(string(body), `"y":6`) {
		return 0, fmt.Errorf("scoring answered %s: %s", resp.Status, body)
	}
	return d, nil
}
