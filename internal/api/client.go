package api

import (
	"bytes"
	"slices"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
)

// Error is a non-2xx answer from the server.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("server answered %d", e.Status)
}

// Error codes carried in ErrorBody.Code.
const (
	CodeNotFound   = "not_found"
	CodeInvalid    = "invalid"
	CodeConflict   = "conflict"
	CodeAuth       = "unauthorized"
	CodeInternal   = "internal"
	CodeNotAllowed = "not_allowed"
	CodeTooLarge   = "too_large" // 413: the body is over its route's limit (the message names it)
	CodeTimeout    = "timeout"   // 408: the body did not arrive in time
	CodeBusy       = "busy"      // 503: try again later
	CodeNoSpace    = "no_space"  // 507: the workspace's disk is full (the message says where)
)

// IsNotFound reports whether err is a 404 from the server.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// IsServerError reports whether err came from the server deciding (as opposed to not reaching it).
func IsServerError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Client talks to one workspace server, or to one of several serving one workspace (design
// 0020): given a comma-separated list of addresses, it uses the first, and moves to the next
// when a call cannot reach the one in use (no answer at all: an answer, even an error, stays).
type Client struct {
	mu      sync.RWMutex
	base    string
	bases   []string // every address given; base is one of them (or one SetBaseURL set)
	token   string
	attempt int
	hc      *http.Client

	// The typed resource clients (resources.go).
	Jobs             *JobClient
	Runs             *RunClient
	Blobs            *BlobClient
	Computes         *ComputeClient
	Sizes            *SizeClient
	Nodes            *NodeClient
	Agents           *AgentClient
	Instances        *InstanceClient
	Models           *ModelClient
	ModelLineage     *ModelLineageClient
	ModelAliases     *ModelAliasClient
	Data             *DataClient
	Datastores       *DatastoreClient
	Connections      *ConnectionClient
	Environments     *EnvironmentClient
	Components       *ComponentClient
	Endpoints        *EndpointClient
	Deployments      *DeploymentClient
	BatchEndpoints   *BatchEndpointClient
	BatchDeployments *BatchDeploymentClient
	Users            *UserClient
	Tokens           *TokenClient
	Secrets          *SecretClient
	Workspace        *WorkspaceClient
	Webhooks         *WebhookClient
}

// AttemptHeader carries a supervisor's run attempt.
const AttemptHeader = "X-Hangar-Attempt"

// SetAttempt makes every call say which attempt of its run it belongs to.
func (c *Client) SetAttempt(n int) {
	c.mu.Lock()
	c.attempt = n
	c.mu.Unlock()
}

// SetToken replaces the token the client authenticates with (a supervisor's renewed run token).
func (c *Client) SetToken(token string) {
	c.mu.Lock()
	c.token = token
	c.mu.Unlock()
}

// NewClient returns a client for the server at baseURL, authenticating with token; options
// say how to verify an https server (WithCA, WithTLS).
func NewClient(baseURL, token string, opts ...Option) *Client {
	bases := SplitURLs(baseURL)
	c := &Client{base: strings.TrimRight(baseURL, "/"), bases: bases, token: token, hc: &http.Client{}}
	c.initResources()
	if len(bases) > 0 {
		c.base = bases[0]
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// SplitURLs splits a comma-separated list of server addresses (a single address is a list of one).
func SplitURLs(list string) []string {
	var out []string
	for _, u := range strings.Split(list, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// FirstURL is the first address of a comma-separated list.
func FirstURL(list string) string {
	if us := SplitURLs(list); len(us) > 0 {
		return us[0]
	}
	return ""
}

// unreachable is Unreachable for a request of the client's that got no answer (a call its
// caller gave up on says nothing of the server).
func (c *Client) unreachable(req *http.Request) {
	if req.Context().Err() == nil {
		c.Unreachable(req.URL.String())
	}
}

// Unreachable moves the client to the address after the one a call to u (a URL on it) could not
// reach, unless another call moved it already.
func (c *Client) Unreachable(u string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bases) < 2 || (u != c.base && !strings.HasPrefix(u, c.base+"/")) {
		return
	}
	next := c.bases[0]
	for i, b := range c.bases {
		if b == c.base && i+1 < len(c.bases) {
			next = c.bases[i+1]
		}
	}
	c.base = next
}

// SetServers replaces the list of addresses with the servers' own (a comma-separated list a
// server sent), keeping the address in use when the list has it. A client that reaches the
// servers through an address of another kind (an SSH tunnel's, a load balancer's, a Kubernetes
// Service's: none of its addresses is in the list) keeps its own, and SetServers says false.
func (c *Client) SetServers(list string) bool {
	bases := SplitURLs(list)
	c.mu.Lock()
	defer c.mu.Unlock()
	known := false
	for _, b := range c.bases {
		known = known || slices.Contains(bases, b)
	}
	if !known {
		return false
	}
	c.bases = bases
	if !slices.Contains(bases, c.base) {
		c.base = bases[0]
	}
	return true
}

// BaseURL is the address in use.
func (c *Client) BaseURL() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.base
}

// SetBaseURL points the client at a (restarted) server.
func (c *Client) SetBaseURL(u string) {
	c.mu.Lock()
	c.base = strings.TrimRight(u, "/")
	c.mu.Unlock()
}

func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	c.mu.RLock()
	u := c.base + path
	tok, attempt := c.token, c.attempt
	c.mu.RUnlock()
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if attempt > 0 {
		req.Header.Set(AttemptHeader, strconv.Itoa(attempt))
	}
	return req, nil
}

// do sends a request and decodes a JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.send(req, out)
}

func (c *Client) send(req *http.Request, out any) error {
	resp, err := c.hc.Do(req)
	if err != nil {
		c.unreachable(req)
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return decodeError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent { // 204: an older server's answer to a call that now has a reply
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode %s %s answer: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
		return &Error{Status: resp.StatusCode, Code: eb.Code, Message: eb.Error}
	}
	var mb struct { // MLflow's routes answer in MLflow's shape
		Code    string `json:"error_code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &mb) == nil && mb.Message != "" {
		return &Error{Status: resp.StatusCode, Code: mb.Code, Message: mb.Message}
	}
	return &Error{Status: resp.StatusCode, Message: fmt.Sprintf("server answered %s: %s", resp.Status, strings.TrimSpace(string(b)))}
}

// Health checks that the server answers.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	return call[Health](ctx, c, http.MethodGet, "/api/health", nil)
}

// List lists the workspace's compute targets.
func (c *ComputeClient) List(ctx context.Context) ([]Compute, error) {
	return callValue[[]Compute](ctx, c.client, http.MethodGet, "/api/computes", nil)
}

// Get shows one compute target.
func (c *ComputeClient) Get(ctx context.Context, name string) (*Compute, error) {
	return call[Compute](ctx, c.client, http.MethodGet, "/api/computes/"+url.PathEscape(name), nil)
}

// Brief returns a compute target without asking its backend to describe its node (which
// may probe the machine or reach a remote host): enough to know it exists.
func (c *ComputeClient) Brief(ctx context.Context, name string) (*Compute, error) {
	return call[Compute](ctx, c.client, http.MethodGet, "/api/computes/"+url.PathEscape(name)+"?detail=false", nil)
}

// Missing returns the hashes the server lacks.
func (c *BlobClient) Missing(ctx context.Context, hashes []string) ([]string, error) {
	var out MissingResponse
	err := c.client.do(ctx, http.MethodPost, "/api/blobs/missing", MissingRequest{Hashes: hashes}, &out)
	return out.Missing, err
}

// Put uploads one blob, streaming body; size is used as Content-Length when >= 0.
func (c *BlobClient) Put(ctx context.Context, hash string, body io.Reader, size int64) error {
	req, err := c.client.newRequest(ctx, http.MethodPut, "/api/blobs/"+hash, body)
	if err != nil {
		return err
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	return c.client.send(req, nil)
}

// PutBundle uploads a bundle (a tar stream of blobs named by hash).
func (c *BlobClient) PutBundle(ctx context.Context, body io.Reader) (*BundleResponse, error) {
	req, err := c.client.newRequest(ctx, http.MethodPost, "/api/blobs/bundle", body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-tar")
	var out BundleResponse
	return &out, c.client.send(req, &out)
}

// Open streams one blob; the caller closes it.
func (c *BlobClient) Open(ctx context.Context, hash string) (io.ReadCloser, error) {
	resp, err := c.client.get(ctx, "/api/blobs/"+hash)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// get sends a GET whose answer the caller reads as it comes (a stream, or headers beside the
// body): a 2xx response, whose body the caller closes, or the server's error, decoded.
func (c *Client) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.unreachable(req)
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

// Create submits a job.
func (c *JobClient) Create(ctx context.Context, req CreateJobRequest) (*RunDetail, error) {
	return call[RunDetail](ctx, c.client, http.MethodPost, "/api/jobs", req)
}

// List lists runs, newest first.
func (c *JobClient) List(ctx context.Context, limit int) ([]RunDetail, error) {
	return callValue[[]RunDetail](ctx, c.client, http.MethodGet, "/api/jobs?limit="+strconv.Itoa(limit), nil)
}

// Get shows one run.
func (c *JobClient) Get(ctx context.Context, name string) (*RunDetail, error) {
	return call[RunDetail](ctx, c.client, http.MethodGet, "/api/jobs/"+url.PathEscape(name), nil)
}

// Cancel asks for a run to be canceled.
func (c *JobClient) Cancel(ctx context.Context, name string) (*RunDetail, error) {
	return call[RunDetail](ctx, c.client, http.MethodPost, "/api/jobs/"+url.PathEscape(name)+"/cancel", nil)
}

// Logs returns log lines after seq `after`, waiting up to wait for new ones.
func (c *JobClient) Logs(ctx context.Context, name, file string, after int64, wait time.Duration) (*LogsResponse, error) {
	q := url.Values{}
	q.Set("after", strconv.FormatInt(after, 10))
	q.Set("wait", strconv.FormatFloat(wait.Seconds(), 'f', -1, 64))
	if file != "" {
		q.Set("file", file)
	}
	return call[LogsResponse](ctx, c.client, http.MethodGet, "/api/jobs/"+url.PathEscape(name)+"/logs?"+q.Encode(), nil)
}

// Metrics returns a run's metric history.
func (c *JobClient) Metrics(ctx context.Context, name string) (*MetricsResponse, error) {
	return call[MetricsResponse](ctx, c.client, http.MethodGet, "/api/jobs/"+url.PathEscape(name)+"/metrics", nil)
}

// Artifacts returns the manifests of a run's artifacts.
func (c *JobClient) Artifacts(ctx context.Context, name string) (*ArtifactsResponse, error) {
	return call[ArtifactsResponse](ctx, c.client, http.MethodGet, "/api/jobs/"+url.PathEscape(name)+"/artifacts", nil)
}

// Create creates (or, with update, replaces) a compute target; the server verifies it first.
func (c *ComputeClient) Create(ctx context.Context, s compute.Spec, update bool) (*Compute, error) {
	if update {
		return call[Compute](ctx, c.client, http.MethodPut, "/api/computes/"+url.PathEscape(s.Name), s)
	}
	return call[Compute](ctx, c.client, http.MethodPost, "/api/computes", s)
}

// Delete removes (detaches) a compute target; force cancels its active runs.
func (c *ComputeClient) Delete(ctx context.Context, name string, force bool) error {
	return c.client.do(ctx, http.MethodDelete, "/api/computes/"+url.PathEscape(name)+"?force="+strconv.FormatBool(force), nil, nil)
}

// Settings returns the workspace settings that are set.
func (c *WorkspaceClient) Settings(ctx context.Context) (map[string]string, error) {
	return callValue[map[string]string](ctx, c.client, http.MethodGet, "/api/settings", nil)
}

// SetSetting changes a workspace setting.
func (c *WorkspaceClient) SetSetting(ctx context.Context, key, value string) error {
	return c.client.do(ctx, http.MethodPut, "/api/settings/"+url.PathEscape(key), map[string]string{"value": value}, nil)
}

// call sends a request (in, when not nil, as its JSON body) and decodes the JSON answer into
// a new T.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (*T, error) {
	var out T
	return &out, c.do(ctx, method, path, in, &out)
}

// callValue is call for an answer kept as a value: a list, a map.
func callValue[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	return out, c.do(ctx, method, path, in, &out)
}
