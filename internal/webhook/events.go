package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/store"
)

// Events are the registry events a webhook may subscribe to, MLflow's model ones
// (mlflow/entities/webhook.py VALID_ENTITY_ACTIONS). MLflow's prompt events have no Hangar
// counterpart.
var Events = []string{
	store.EventRegisteredModelCreated,
	store.EventModelVersionCreated,
	store.EventModelVersionTagSet,
	store.EventModelVersionTagDeleted,
	store.EventModelVersionAliasCreated,
	store.EventModelVersionAliasDeleted,
}

// The proto enums' numbers (mlflow/protos/webhooks.proto), which a JSON body may give instead of
// the names.
var (
	entityNumbers = map[int]string{1: "registered_model", 2: "model_version", 3: "model_version_tag", 4: "model_version_alias",
		5: "prompt", 6: "prompt_version", 7: "prompt_tag", 8: "prompt_version_tag", 9: "prompt_alias"}
	actionNumbers = map[int]string{1: "created", 2: "updated", 3: "deleted", 4: "set"}
)

// Known is whether event is one a webhook may subscribe to.
func Known(event string) bool {
	for _, e := range Events {
		if e == event {
			return true
		}
	}
	return false
}

// EventOf reads an event from the JSON of MLflow's WebhookEvent: the entity and the action as
// the proto enum's names (MODEL_VERSION, CREATED; any case) or numbers. It refuses what is not
// one of Events.
func EventOf(entity, action json.RawMessage) (string, error) {
	e, err := enumName(entity, entityNumbers)
	if err != nil {
		return "", fmt.Errorf("entity: %w", err)
	}
	a, err := enumName(action, actionNumbers)
	if err != nil {
		return "", fmt.Errorf("action: %w", err)
	}
	ev := e + "." + a
	if !Known(ev) {
		return "", fmt.Errorf("Invalid event '%s': Hangar's webhooks take %s", ev, strings.Join(Events, ", "))
	}
	return ev, nil
}

func enumName(raw json.RawMessage, numbers map[int]string) (string, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		if s, ok := numbers[n]; ok {
			return s, nil
		}
		return "", fmt.Errorf("unknown value %d", n)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s == "" {
		return "", fmt.Errorf("expected a name, got %s", string(raw))
	}
	return strings.ToLower(s), nil
}

// Enum is an event as MLflow's WebhookEvent JSON: {"entity": "MODEL_VERSION", "action": "CREATED"}.
func Enum(event string) (entity, action string) {
	e, a, _ := strings.Cut(event, ".")
	return strings.ToUpper(e), strings.ToUpper(a)
}

// examples are MLflow's example payloads (mlflow/webhooks/types.py), which a webhook's test sends.
var examples = map[string]string{
	store.EventRegisteredModelCreated: `{"name": "example_model", "tags": {"example_key": "example_value"}, "description": "An example registered model"}`,
	store.EventModelVersionCreated: `{"name": "example_model", "version": "1", "source": "runs:/abcd1234abcd5678/model", "run_id": "abcd1234abcd5678", ` +
		`"tags": {"example_key": "example_value"}, "description": "An example model version"}`,
	store.EventModelVersionTagSet:       `{"name": "example_model", "version": "1", "key": "example_key", "value": "example_value"}`,
	store.EventModelVersionTagDeleted:   `{"name": "example_model", "version": "1", "key": "example_key"}`,
	store.EventModelVersionAliasCreated: `{"name": "example_model", "alias": "example_alias", "version": "1"}`,
	store.EventModelVersionAliasDeleted: `{"name": "example_model", "alias": "example_alias"}`,
}

// Example is MLflow's example payload of event.
func Example(event string) json.RawMessage { return json.RawMessage(examples[event]) }
