package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Exec asks the server to have node nodeRank's supervisor run command; it returns the request.
func (c *RunClient) Exec(ctx context.Context, runID string, nodeRank int, command string) (*ExecRequest, error) {
	return call[ExecRequest](ctx, c.client, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/exec",
		ExecRequest{NodeRank: nodeRank, Command: command})
}

// ExecStatus waits up to wait for a relayed command to end.
func (c *RunClient) ExecStatus(ctx context.Context, runID, id string, wait time.Duration) (*ExecStatus, error) {
	return call[ExecStatus](ctx, c.client, http.MethodGet, "/api/runs/"+url.PathEscape(runID)+"/exec/"+url.PathEscape(id)+
		"?wait="+strconv.FormatFloat(wait.Seconds(), 'f', -1, 64), nil)
}

// PendingExecs waits up to wait for commands to run on node nodeRank, and takes them.
func (c *RunClient) PendingExecs(ctx context.Context, runID string, nodeRank int, wait time.Duration) ([]ExecRequest, error) {
	return callValue[[]ExecRequest](ctx, c.client, http.MethodGet, "/api/runs/"+url.PathEscape(runID)+"/exec?node="+strconv.Itoa(nodeRank)+
		"&wait="+strconv.FormatFloat(wait.Seconds(), 'f', -1, 64), nil)
}

// ExecDone reports how a relayed command ended.
func (c *RunClient) ExecDone(ctx context.Context, runID, id string, st ExecStatus) error {
	return c.client.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(runID)+"/exec/"+url.PathEscape(id)+"/done", st, nil)
}
