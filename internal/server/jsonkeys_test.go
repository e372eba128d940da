package server

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestCheckDuplicateKeys(t *testing.T) {
	type inner struct {
		Command string            `json:"command"`
		Env     map[string]string `json:"environment_variables"`
		Any     any               `json:"any"`
		Raw     json.RawMessage   `json:"raw"`
	}
	type embedded struct {
		Deep string `json:"deep"`
	}
	type body struct {
		embedded
		Spec  *inner  `json:"spec"`
		List  []inner `json:"list"`
		Skip  string  `json:"-"`
		Plain string
	}
	for _, tc := range []struct {
		name, json string
		want       string // "" accepted, else what the error says
	}{
		{"plain", `{"spec":{"command":"a","environment_variables":{"A":"1","a":"2"}},"Plain":"x"}`, ""},
		{"top level", `{"Plain":"x","Plain":"y"}`, `duplicate key "Plain" in the JSON body`},
		{"nested", `{"spec":{"command":"echo a","command":"echo b"}}`, `duplicate key "command" in spec of the JSON body`},
		{"in a list", `{"list":[{"command":"a"},{"command":"a","command":"b"}]}`, `duplicate key "command" in list[1] of the JSON body`},
		{"case folds onto one field", `{"spec":{"command":"a","Command":"b"}}`, `"command" and "Command" set the same field`},
		{"a field by its Go name", `{"plain":"a","PLAIN":"b"}`, `"plain" and "PLAIN" set the same field`},
		{"escaped spelling", `{"spec":{"command":"a","comm\u0061nd":"b"}}`, `duplicate key "command" in spec`},
		{"map keys differ in case", `{"spec":{"environment_variables":{"PATH":"1","path":"2"}}}`, ""},
		{"map keys twice", `{"spec":{"environment_variables":{"X":"1","X":"2"}}}`, `duplicate key "X" in spec.environment_variables`},
		{"promoted field", `{"deep":"a","Deep":"b"}`, `set the same field`},
		{"unknown keys twice", `{"nope":1,"nope":2}`, `duplicate key "nope"`},
		{"unknown keys differ in case", `{"nope":1,"Nope":2}`, ""},
		{"any holds exact keys", `{"spec":{"any":{"a":1,"A":2}}}`, ""},
		{"any twice", `{"spec":{"any":{"a":1,"a":2}}}`, `duplicate key "a" in spec.any`},
		{"raw", `{"spec":{"raw":{"k":[1,{"k":2,"k":3}]}}}`, `duplicate key "k" in spec.raw.k[1]`},
		{"strings with braces and quotes", `{"spec":{"command":"{\"command\":1,\"command\":2} ]}, \\"}}`, ""},
		{"ignored field", `{"Skip":"a"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v body
			if err := json.Unmarshal([]byte(tc.json), &v); err != nil {
				t.Fatalf("test body is not JSON: %v", err)
			}
			err := checkDuplicateKeys([]byte(tc.json), reflect.TypeOf(&v))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// A job whose spec gives a key twice is refused with 400 naming the key, on the native API
// (where the last one would win) and on MLflow's (in MLflow's error shape).
func TestDuplicateJSONKeysRefused(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct {
		path, body, says string
	}{
		{"/api/jobs", `{"spec":{"command":"echo checked","command":"echo smuggled"}}`, `duplicate key "command" in spec`},
		{"/api/jobs", `{"spec":{"command":"echo checked","Command":"echo smuggled"}}`, `"command" and "Command" set the same field`},
		{"/api/2.0/mlflow/experiments/create", `{"name":"a","name":"b"}`, `"error_code":"BAD_REQUEST","message":"duplicate key "name"`},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.url+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b := strings.ReplaceAll(string(raw), `\"`, `"`)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b, tc.says) {
			t.Errorf("POST %s %s: %d %s, want 400 saying %s", tc.path, tc.body, resp.StatusCode, b, tc.says)
		}
	}
	runs, err := ts.admin.Jobs.List(t.Context(), 0)
	if err == nil && len(runs) != 0 {
		t.Errorf("a refused job was created: %+v", runs)
	}
}
