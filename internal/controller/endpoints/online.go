package endpoints

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/pattern"
	"github.com/hangar-ml/hangar/internal/serving"
	"github.com/hangar-ml/hangar/internal/store"
)

// endpointName is Azure's rule for endpoint names (they become URL parts).
var endpointName = pattern.New(`^[a-zA-Z][a-zA-Z0-9-]{1,30}[a-zA-Z0-9]$`)

// deploymentName is Azure's rule for deployment names as its REST API states it (online and
// batch: `regular_deployment` is one of its examples), bounded to 32 characters like endpoint
// names: a deployment's name is a header value and a path segment.
var deploymentName = pattern.New(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,31}$`)

// deploymentNameRule is deploymentName in words, for messages.
const deploymentNameRule = "1 to 32 letters, digits, '_' and '-', starting with a letter or digit"

// EndpointTokenTTL is how long an aml_token from get-credentials opens its endpoint.
const EndpointTokenTTL = time.Hour

// endpointKeys are an endpoint's two keys (either opens it; regenerate one while the other works).
type endpointKeys struct {
	Primary   string `json:"primary"`
	Secondary string `json:"secondary"`
}

func newKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// CreateEndpoint stores a new online endpoint with two fresh keys, sealed.
func (s *Serving) CreateEndpoint(ctx context.Context, e serving.Endpoint) (*store.EndpointRecord, error) {
	if !endpointName.MatchString(e.Name) {
		return nil, invalidf("name: %q must be 3 to 32 letters, digits and '-', starting with a letter", e.Name)
	}
	if err := checkAuthMode(&e); err != nil {
		return nil, err
	}
	if len(e.Traffic)+len(e.MirrorTraffic) > 0 {
		return nil, invalidf("traffic: a new endpoint has no deployments yet; create them, then set traffic with online-endpoint update --traffic or online-deployment create --all-traffic")
	}
	sealed, err := s.sealKeys(endpointKeys{Primary: newKey(), Secondary: newKey()})
	if err != nil {
		return nil, err
	}
	now := s.now()
	rec := store.EndpointRecord{Spec: e, Keys: sealed, CreatedAt: now, UpdatedAt: now}
	if err := s.store.Serving.PutEndpoint(ctx, rec, true); errors.Is(err, store.ErrExists) {
		return nil, conflictf("online endpoint %s already exists; use online-endpoint update", e.Name)
	} else if err != nil {
		return nil, err
	}
	s.log.Info("online endpoint created", "endpoint", e.Name)
	s.Wake()
	return &rec, nil
}

// UpdateEndpoint replaces an endpoint's description, tags and traffic (its name, auth mode and
// keys stay). Traffic must name its deployments.
func (s *Serving) UpdateEndpoint(ctx context.Context, e serving.Endpoint) (*store.EndpointRecord, error) {
	cur, err := s.endpoint(ctx, e.Name)
	if err != nil {
		return nil, err
	}
	if e.AuthMode != "" && e.AuthMode != cur.Spec.AuthMode {
		return nil, invalidf("auth_mode: an endpoint's auth mode cannot change (%s); create another endpoint", cur.Spec.AuthMode)
	}
	e.AuthMode = cur.Spec.AuthMode
	if err := s.checkTraffic(ctx, e.Name, e.Traffic, e.MirrorTraffic); err != nil {
		return nil, err
	}
	rec := store.EndpointRecord{Spec: e, CreatedAt: cur.CreatedAt, UpdatedAt: s.now()}
	if err := s.store.Serving.PutEndpoint(ctx, rec, false); err != nil {
		return nil, err
	}
	s.Wake()
	return s.endpoint(ctx, e.Name)
}

// SetTraffic changes an endpoint's traffic and/or mirror traffic.
func (s *Serving) SetTraffic(ctx context.Context, name string, u api.TrafficUpdate) (*store.EndpointRecord, error) {
	cur, err := s.endpoint(ctx, name)
	if err != nil {
		return nil, err
	}
	e := cur.Spec
	if u.Traffic != nil {
		e.Traffic = u.Traffic
	}
	if u.MirrorTraffic != nil {
		e.MirrorTraffic = u.MirrorTraffic
	}
	return s.UpdateEndpoint(ctx, e)
}

// Endpoint reads an online endpoint.
func (s *Serving) Endpoint(ctx context.Context, name string) (*store.EndpointRecord, error) {
	return s.endpoint(ctx, name)
}

func (s *Serving) endpoint(ctx context.Context, name string) (*store.EndpointRecord, error) {
	e, err := s.store.Serving.Endpoint(ctx, name)
	return e, notFound(err, "no online endpoint named %s", name)
}

// DeleteEndpoint removes an endpoint and its deployments; their replicas stop.
func (s *Serving) DeleteEndpoint(ctx context.Context, name string) error {
	if err := s.store.Serving.DeleteEndpoint(ctx, name); err != nil {
		return notFound(err, "no online endpoint named %s", name)
	}
	s.log.Info("online endpoint deleted", "endpoint", name)
	s.Wake()
	return nil
}

// EndpointCredentials are get-credentials' answer: the keys, or a fresh token.
func (s *Serving) EndpointCredentials(ctx context.Context, name string) (*api.EndpointKeys, error) {
	e, err := s.endpoint(ctx, name)
	if err != nil {
		return nil, err
	}
	if e.Spec.AuthMode == serving.AuthAMLToken {
		exp := s.now().Add(EndpointTokenTTL)
		return &api.EndpointKeys{AccessToken: s.endpointTokens().Mint(name, exp), ExpiryTime: exp, TokenType: "Bearer"}, nil
	}
	k, err := s.unsealKeys(e.Keys)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", name, err)
	}
	return &api.EndpointKeys{PrimaryKey: k.Primary, SecondaryKey: k.Secondary}, nil
}

// RegenerateKey replaces an endpoint's primary or secondary key.
func (s *Serving) RegenerateKey(ctx context.Context, name, which string) error {
	e, err := s.endpoint(ctx, name)
	if err != nil {
		return err
	}
	if e.Spec.AuthMode != serving.AuthKey {
		return invalidf("endpoint %s uses auth_mode %s: it has no keys to regenerate", name, e.Spec.AuthMode)
	}
	k, err := s.unsealKeys(e.Keys)
	if err != nil {
		return err
	}
	switch which {
	case "primary":
		k.Primary = newKey()
	case "secondary":
		k.Secondary = newKey()
	default:
		return invalidf("key-type: %q; use primary or secondary", which)
	}
	if e.Keys, err = s.sealKeys(*k); err != nil {
		return err
	}
	e.UpdatedAt = s.now()
	if err := s.store.Serving.PutEndpoint(ctx, *e, false); err != nil {
		return err
	}
	s.Wake()
	return nil
}

func checkAuthMode(e *serving.Endpoint) error {
	switch e.AuthMode {
	case "":
		e.AuthMode = serving.AuthKey
	case serving.AuthKey, serving.AuthAMLToken:
	case "aad_token":
		return invalidf("auth_mode: aad_token needs Microsoft Entra ID, which a self-hosted workspace does not have; use key or aml_token")
	default:
		return invalidf("auth_mode: %q; use key or aml_token", e.AuthMode)
	}
	return nil
}

// checkTraffic refuses traffic that names a deployment the endpoint does not have, does not add
// up to 100 (or 0), or mirrors a deployment that takes live traffic.
func (s *Serving) checkTraffic(ctx context.Context, endpoint string, traffic, mirror map[string]int) error {
	deps, err := s.store.Serving.Deployments(ctx, endpoint)
	if err != nil {
		return err
	}
	var have []string
	for _, d := range deps {
		have = append(have, d.Spec.Name)
	}
	if err := serving.CheckTraffic(traffic, mirror, have); err != nil {
		return invalidf("%v", err)
	}
	return nil
}

func (s *Serving) sealKeys(k endpointKeys) (string, error) {
	b, _ := json.Marshal(k)
	if s.secrets == nil {
		return "", errors.New("no secret box to seal the endpoint's keys")
	}
	return s.secrets.Encrypt(b)
}

func (s *Serving) unsealKeys(sealed string) (*endpointKeys, error) {
	if s.secrets == nil {
		return nil, errors.New("no secret box to unseal the endpoint's keys")
	}
	b, err := s.secrets.Decrypt(sealed)
	if err != nil {
		return nil, fmt.Errorf("unseal the keys: %w", err)
	}
	var k endpointKeys
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("unseal the keys: %w", err)
	}
	return &k, nil
}
