package api

// The client's typed resource clients, one a noun, as client-go's are: c.Jobs.Create,
// c.Models.List, c.Endpoints.Get. Each holds its Client by a named field, never embedded (the
// Client's methods and the other typed clients are not promoted into it), and shares its
// transport (address, failover, token, attempt, TLS); the methods that move bytes (do, send,
// get) stay on *Client.

// JobClient submits, lists, shows, cancels, archives and deletes jobs and reads what they wrote.
type JobClient struct{ client *Client }

// RunClient is a run's own side (its supervisor and the commands beside it): spec, status,
// logs, metrics, artifacts, checkpoints, secrets and relayed commands.
type RunClient struct{ client *Client }

// BlobClient moves content-addressed blobs.
type BlobClient struct{ client *Client }

// ComputeClient manages compute targets.
type ComputeClient struct{ client *Client }

// SizeClient manages the workspace's VM sizes.
type SizeClient struct{ client *Client }

// NodeClient lists, shows and deletes a compute's nodes.
type NodeClient struct{ client *Client }

// AgentClient is a node agent's side: join and heartbeat.
type AgentClient struct{ client *Client }

// InstanceClient drives compute instances.
type InstanceClient struct{ client *Client }

// DatastoreClient registers, lists and shows datastores.
type DatastoreClient struct{ client *Client }

// EnvironmentClient registers, lists and shows environments and manages the curated ones.
type EnvironmentClient struct{ client *Client }

// EndpointClient manages online endpoints, their traffic and their keys.
type EndpointClient struct{ client *Client }

// DeploymentClient manages an online endpoint's deployments.
type DeploymentClient struct{ client *Client }

// BatchEndpointClient manages batch endpoints and invokes them.
type BatchEndpointClient struct{ client *Client }

// BatchDeploymentClient manages a batch endpoint's deployments.
type BatchDeploymentClient struct{ client *Client }

// UserClient manages users and says who the caller is.
type UserClient struct{ client *Client }

// TokenClient creates, lists and revokes a user's tokens.
type TokenClient struct{ client *Client }

// SecretClient manages workspace secrets.
type SecretClient struct{ client *Client }

// WebhookClient manages MLflow's registry webhooks (their MLflow routes).
type WebhookClient struct{ client *Client }

// WorkspaceClient reads and changes workspace-wide settings and collects unused blobs.
type WorkspaceClient struct{ client *Client }

// initResources gives c its typed resource clients.
func (c *Client) initResources() {
	c.Jobs, c.Runs, c.Blobs = &JobClient{c}, &RunClient{c}, &BlobClient{c}
	c.Computes, c.Sizes, c.Nodes = &ComputeClient{c}, &SizeClient{c}, &NodeClient{c}
	c.Agents, c.Instances = &AgentClient{c}, &InstanceClient{c}
	c.Models, c.Data, c.Components = newModelClient(c), &DataClient{c, "data"}, &ComponentClient{c, "components"}
	c.ModelLineage = &ModelLineageClient{c}
	c.ModelAliases = &ModelAliasClient{c}
	c.Datastores, c.Environments = &DatastoreClient{c}, &EnvironmentClient{c}
	c.Connections = &ConnectionClient{c}
	c.Endpoints, c.Deployments = &EndpointClient{c}, &DeploymentClient{c}
	c.BatchEndpoints, c.BatchDeployments = &BatchEndpointClient{c}, &BatchDeploymentClient{c}
	c.Users, c.Tokens, c.Secrets = &UserClient{c}, &TokenClient{c}, &SecretClient{c}
	c.Workspace, c.Webhooks = &WorkspaceClient{c}, &WebhookClient{c}
}
