package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hangar-ml/hangar/internal/server/mlflowapi"
)

// BenchmarkMLflowLogBatch: log-batch of 10 metrics from 50 concurrent writers, each to its own
// run, through the real server and store (the tracking group of hangar-bench measures the
// same against the binary).
func BenchmarkMLflowLogBatch(b *testing.B) {
	ts := newTestServer(b)
	const writers = 50
	runs := make([]string, writers)
	for i := range runs {
		runs[i] = at(ts.ok(b, http.MethodPost, "runs/create", map[string]any{"experiment_id": "0"}), "run.info.run_id").(string)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: writers}}
	var next sync.WaitGroup
	b.ResetTimer()
	per := b.N/writers + 1
	for w := range writers {
		next.Add(1)
		go func() {
			defer next.Done()
			for i := range per {
				ms := make([]map[string]any, 10)
				for k := range ms {
					ms[k] = map[string]any{"key": fmt.Sprint("m", k), "value": float64(i), "timestamp": time.Now().UnixMilli(), "step": i}
				}
				body, _ := json.Marshal(map[string]any{"run_id": runs[w], "metrics": ms})
				req, _ := http.NewRequest(http.MethodPost, ts.url+mlflowapi.Prefix+"runs/log-batch", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+adminToken)
				resp, err := client.Do(req)
				if err != nil || resp.StatusCode != 200 {
					b.Errorf("log-batch: %v %v", err, resp)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body) // read to the end: the connection is reused
				resp.Body.Close()
			}
		}()
	}
	next.Wait()
}
