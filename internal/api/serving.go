package api

import (
	"time"

	"github.com/hangar-ml/hangar/internal/serving"
)

// ServingReport is a replica's supervisor telling where the replica answers (host:port).
type ServingReport struct {
	Address string `json:"address"`
}

// EndpointView is an online endpoint as `online-endpoint show` prints it.
type EndpointView struct {
	serving.Endpoint
	// ScoringURI is where to POST requests (with the key or token as a bearer token).
	ScoringURI        string    `json:"scoring_uri"`
	ProvisioningState string    `json:"provisioning_state"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// DeploymentView is a deployment with its state and replicas.
type DeploymentView struct {
	serving.Deployment
	Generation        int           `json:"generation"`
	ProvisioningState string        `json:"provisioning_state"`
	Reason            string        `json:"reason,omitempty"`
	Replicas          []ReplicaView `json:"replicas"`
	// ModelAlias is the model alias the deployment follows (model: azureml:NAME@ALIAS); nil for
	// one that follows none.
	ModelAlias *FollowedAlias `json:"model_alias,omitempty"`
	// LastFailedReplica is the last replica run that ended on its own (its logs say why).
	LastFailedReplica string    `json:"last_failed_replica,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// FollowedAlias is the model alias a deployment follows: the version it serves (its
// model.version, resolved when it was last rolled), the version the alias names now ("" when
// the alias is gone: it keeps serving) and what its state warns of.
type FollowedAlias struct {
	Model        string `json:"model"`
	Alias        string `json:"alias"`
	Serving      string `json:"serving_version"`
	AliasVersion string `json:"alias_version,omitempty"`
	Warning      string `json:"warning,omitempty"`
}

// ReplicaView is one replica: its run, the run's status and where it answers.
type ReplicaView struct {
	Run        string `json:"run"`
	Status     string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	Address    string `json:"address,omitempty"`
	Generation int    `json:"generation"`
}

// EndpointKeys are get-credentials' answer: the keys (auth_mode key) or a token (aml_token).
type EndpointKeys struct {
	PrimaryKey   string    `json:"primaryKey,omitempty"`
	SecondaryKey string    `json:"secondaryKey,omitempty"`
	AccessToken  string    `json:"accessToken,omitempty"`
	ExpiryTime   time.Time `json:"expiryTimeUtc,omitzero"`
	TokenType    string    `json:"tokenType,omitempty"`
}

// TrafficUpdate changes an endpoint's traffic or mirror traffic (online-endpoint update
// --traffic / --mirror-traffic); nil leaves one as it is.
type TrafficUpdate struct {
	Traffic       map[string]int `json:"traffic,omitempty"`
	MirrorTraffic map[string]int `json:"mirror_traffic,omitempty"`
}
