package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// MLflow's webhook headers and signature version (mlflow/webhooks/constants.py).
const (
	HeaderSignature  = "X-MLflow-Signature"
	HeaderTimestamp  = "X-MLflow-Timestamp"
	HeaderDeliveryID = "X-MLflow-Delivery-Id"
	signatureVersion = "v1"
)

// Sign is MLflow's signature of a delivery: "v1," and the base64 HMAC-SHA256, under the
// webhook's secret, of "<delivery id>.<timestamp>.<body>" (mlflow/webhooks/delivery.py). A
// receiver verifies it the same way (Verify).
func Sign(secret, deliveryID, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(deliveryID + "." + timestamp + "."))
	m.Write(body)
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Verify is what MLflow's documentation tells a receiver to do: recompute the signature of
// the body under the shared secret and compare in constant time.
func Verify(secret, deliveryID, timestamp string, body []byte, signature string) bool {
	if !strings.HasPrefix(signature, signatureVersion+",") {
		return false
	}
	return hmac.Equal([]byte(Sign(secret, deliveryID, timestamp, body)), []byte(signature))
}

// envelope is the body MLflow POSTs: the event's entity and action, when, and its payload.
type envelope struct {
	Entity    string          `json:"entity"`
	Action    string          `json:"action"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Body is the JSON a delivery of event POSTs: MLflow's {"entity", "action", "timestamp",
// "data"}, the timestamp in ISO 8601 as Python's isoformat writes it in UTC. at is when the
// event happened, so that every attempt of a delivery sends the same body.
func Body(event string, payload json.RawMessage, at time.Time) ([]byte, error) {
	e, a, _ := strings.Cut(event, ".")
	return json.Marshal(envelope{Entity: e, Action: a, Timestamp: at.UTC().Format("2006-01-02T15:04:05.000000+00:00"), Data: payload})
}
