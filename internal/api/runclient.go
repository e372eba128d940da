package api

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The calls below are made by a run supervisor with its run token.

// Spec fetches what the supervisor must execute; nodeID (a cluster node, or "") says where it
// runs, for its place in a multi-node run.
func (c *RunClient) Spec(ctx context.Context, runID, nodeID string) (*RunSpec, error) {
	return call[RunSpec](ctx, c.client, http.MethodGet, "/api/runs/"+url.PathEscape(runID)+"/spec?node="+url.QueryEscape(nodeID), nil)
}

// ReportStatus reports a phase change.
func (c *RunClient) ReportStatus(ctx context.Context, runID string, r StatusReport) (*StatusReply, error) {
	return call[StatusReply](ctx, c.client, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/status", r)
}

// Heartbeat says the supervisor is alive; the reply carries a pending cancel.
func (c *RunClient) Heartbeat(ctx context.Context, runID string) (*StatusReply, error) {
	return call[StatusReply](ctx, c.client, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/heartbeat", struct{}{})
}

// ReportServing tells the server where a replica run answers (design 0014).
func (c *RunClient) ReportServing(ctx context.Context, runID, address string) error {
	return c.client.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/serving", ServingReport{Address: address}, nil)
}

// ShipLogs sends consecutive log lines; the answer says what the server holds.
func (c *RunClient) ShipLogs(ctx context.Context, runID string, b LogBatch) (*Ack, error) {
	return call[Ack](ctx, c.client, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/logs", b)
}

// ShipMetrics sends consecutive metrics.
func (c *RunClient) ShipMetrics(ctx context.Context, runID string, b MetricBatch) (*Ack, error) {
	return call[Ack](ctx, c.client, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/metrics", b)
}

// ReportArtifacts registers one node's collected artifacts.
func (c *RunClient) ReportArtifacts(ctx context.Context, runID string, r ArtifactsReport) (*ArtifactsReply, error) {
	return call[ArtifactsReply](ctx, c.client, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/artifacts", r)
}

// ContainerLog streams the output of the run's own serving container where only the backend can
// read it (backend.ContainerLogger: a Kubernetes pod's main container), one "<RFC 3339 time>
// <text>" line each, the lines written after since, following new ones for up to follow.
func (c *RunClient) ContainerLog(ctx context.Context, runID string, since time.Time, follow time.Duration) (io.ReadCloser, error) {
	q := url.Values{}
	if !since.IsZero() {
		q.Set("since", since.UTC().Format(time.RFC3339Nano))
	}
	q.Set("follow", strconv.FormatFloat(follow.Seconds(), 'f', -1, 64))
	resp, err := c.client.get(ctx, "/api/runs/"+url.PathEscape(runID)+"/container-log?"+q.Encode())
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
