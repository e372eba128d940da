package api

import (
	"context"
	"net/http"
	"net/url"
)

// NodeDeletion is the answer to deleting a cluster node by hand: the node is on its way out
// (its machine is deleted in the background) and its runs went back to the queue.
type NodeDeletion struct {
	Node     string   `json:"node"`
	Pool     string   `json:"pool"`
	Reason   string   `json:"reason"`
	Requeued []string `json:"requeued_runs,omitempty"`
}

// Delete removes a cluster node: the provider deletes its machine and its runs are
// requeued. The node is listed as releasing until its machine is gone.
func (c *NodeClient) Delete(ctx context.Context, id string) (*NodeDeletion, error) {
	return call[NodeDeletion](ctx, c.client, http.MethodDelete, "/api/nodes/"+url.PathEscape(id), nil)
}
