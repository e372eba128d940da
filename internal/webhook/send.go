package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// What a delivery's POST may take: the whole exchange, and the part of the answer read (a
// webhook's test shows it; a delivery reads none).
const (
	DefaultTimeout  = 10 * time.Second
	MaxResponseBody = 4 << 10
)

// Sender POSTs deliveries. The server makes these requests to URLs an owner gave, so they go
// out bare (docs/security.md "Outbound requests"): only http and https, no redirect followed
// (a 3xx is the answer), a timeout on the whole exchange, at most MaxResponseBody of the
// answer read, and nothing of the server's in them (no token, no cookie: MLflow's headers, the
// body and its signature only).
type Sender struct {
	client *http.Client
}

// NewSender returns a Sender whose requests end after timeout (0: DefaultTimeout).
func NewSender(timeout time.Duration) *Sender {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2
	return &Sender{client: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// Request is one POST of a delivery.
type Request struct {
	URL        string
	Secret     string // in the clear; "" sends no signature
	DeliveryID string
	Body       []byte
	At         time.Time // when it is sent: X-MLflow-Timestamp
}

// Response is what the receiver answered: its status and the start of its body.
type Response struct {
	Status int
	Body   string
}

// CheckURL says what is wrong with a webhook's URL: it must be absolute, http or https, with
// a host.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("Invalid webhook URL '%s': %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("Invalid webhook URL '%s': the scheme must be http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("Invalid webhook URL '%s': it names no host", raw)
	}
	return nil
}

// Send POSTs r.Body to r.URL with MLflow's headers, signed when there is a secret. An error is
// no answer at all (a bad URL, refused, timed out); any answer, 5xx included, is a Response.
func (s *Sender) Send(ctx context.Context, r Request) (Response, error) {
	if err := CheckURL(r.URL); err != nil {
		return Response{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return Response{}, err
	}
	ts := strconv.FormatInt(r.At.Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hangar-webhook")
	req.Header.Set(HeaderDeliveryID, r.DeliveryID)
	req.Header.Set(HeaderTimestamp, ts)
	if r.Secret != "" {
		req.Header.Set(HeaderSignature, Sign(r.Secret, r.DeliveryID, ts, r.Body))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the caller's to say
		}
		return Response{}, fmt.Errorf("POST: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	return Response{Status: resp.StatusCode, Body: string(body)}, nil
}
