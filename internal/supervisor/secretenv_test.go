package supervisor

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/job"
)

const testSecret = "hf_Zq81xSECRETv4lue"

func TestRedactorLineAndHold(t *testing.T) {
	r := newRedactor([]string{testSecret, "short", "-----BEGIN KEY-----\nAAAAbbbbCCCC\n}\n-----END KEY-----"})
	for _, tc := range []struct{ in, want string }{
		{"token=" + testSecret + " ok", "token=*** ok"},
		{testSecret + testSecret, "******"},
		{"a short word", "a *** word"},
		{"AAAAbbbbCCCC", "***"},              // a line of a multi-line value
		{"} nothing else", "} nothing else"}, // too short a line to mask alone
		{"-----BEGIN KEY-----", "***"},
	} {
		if got := string(r.line([]byte(tc.in))); got != tc.want {
			t.Errorf("line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"log hf_Zq8", len("hf_Zq8")},
		{"log hf_Zq81xSECRETv4lu", len(testSecret) - 1},
		{"nothing here", 0},
		{"sho", 3},
	} {
		if got := r.hold([]byte(tc.in)); got != tc.want {
			t.Errorf("hold(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	var none *redactor
	if got := string(none.line([]byte("x"))); got != "x" || none.hold([]byte("x")) != 0 {
		t.Error("a nil redactor changed text")
	}
}

// The value never reaches the log file, however the command's output arrives: in one write,
// split across writes, split across an idle flush of a partial line, one byte at a time, in
// the middle of a line longer than the capture's limit, or as a multi-line value.
func TestCaptureRedactsSecretsSplitAcrossWrites(t *testing.T) {
	multi := "-----BEGIN KEY-----\nAAAAbbbbCCCCdddd\n-----END KEY-----"
	for _, tc := range []struct {
		name   string
		writes []string
		idle   int // flush early after this write (-1: never)
	}{
		{"one write", []string{"tok=" + testSecret + "\n"}, -1},
		{"two writes", []string{"tok=hf_Zq81x", "SECRETv4lue end\n"}, -1},
		{"idle flush between the halves", []string{"tok=hf_Zq81x", "SECRETv4lue end\n"}, 0},
		{"idle flush with the value's start only", []string{"hf_Zq8", "1xSECRETv4lue\n"}, 0},
		{"one byte at a time", strings.Split(testSecret+"\n", ""), 5},
		{"multi-line value", []string{"key:\n" + multi + "\n"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, path, _ := newTestCapture(t)
			c.setRedactor(newRedactor([]string{testSecret, multi}))
			for i, w := range tc.writes {
				c.write([]byte(w))
				if i == tc.idle {
					c.mu.Lock()
					c.flushEarly()
					c.mu.Unlock()
				}
			}
			if err := c.close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			// Not the value, nor a piece of it a reader could put together with the next line.
			for _, leak := range []string{testSecret, "hf_Zq8", "SECRETv4lue", "AAAAbbbbCCCCdddd", "-----BEGIN KEY-----"} {
				if bytes.Contains(b, []byte(leak)) {
					t.Fatalf("log holds %q:\n%s", leak, b)
				}
			}
			if !bytes.Contains(b, []byte("***")) {
				t.Fatalf("log shows no redaction:\n%s", b)
			}
		})
	}
	t.Run("longer than a line", func(t *testing.T) {
		c, path, _ := newTestCapture(t)
		c.maxLine = 16
		c.setRedactor(newRedactor([]string{testSecret}))
		c.write([]byte("0123456789abhf_Zq81x")) // past maxLine: written out early, the value's start held
		c.write([]byte("SECRETv4lue tail\n"))
		if err := c.close(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("hf_Zq8")) || !bytes.Contains(b, []byte("***")) {
			t.Fatalf("log:\n%s", b)
		}
	})
}

// The supervisor fetches the values its spec names with its run token, binds them into the
// command's variables, and redacts them from its reports and its own log.
func TestSupervisorBindsAndRedactsSecrets(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		_ = json.NewEncoder(w).Encode(api.RunSecrets{Values: map[string]string{"hf": testSecret}})
	}))
	defer srv.Close()
	var logged bytes.Buffer
	dir := t.TempDir()
	s, err := New(api.SupervisorConfig{RunID: "r", Token: "tok", ServerURL: srv.URL, Dir: filepath.Join(dir, "run"),
		CacheDir: filepath.Join(dir, "cache")}, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s.spec = &api.RunSpec{RunID: "r", Spec: job.Spec{EnvironmentVariables: map[string]string{
		"HF_TOKEN": "${{secrets.hf}}", "AUTH": "Bearer ${{secrets.hf}}", "PLAIN": "p"}}}
	c, _, _ := newTestCapture(t)
	defer c.close()
	if err := s.loadSecrets(t.Context(), &pipeline{capt: c}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "GET /api/runs/r/secrets Bearer tok" {
		t.Fatalf("requests = %q", asked)
	}
	vars := s.environment.vars(&workspace{dir: t.TempDir()}, nil)
	if vars["HF_TOKEN"] != testSecret || vars["AUTH"] != "Bearer "+testSecret || vars["PLAIN"] != "p" {
		t.Fatalf("variables: HF_TOKEN=%q AUTH=%q PLAIN=%q", vars["HF_TOKEN"], vars["AUTH"], vars["PLAIN"])
	}
	if s.spec.Spec.EnvironmentVariables["HF_TOKEN"] != "${{secrets.hf}}" {
		t.Fatal("the spec was changed")
	}
	s.warn("saw " + testSecret)
	s.log.Error("failed "+testSecret, "err", os.ErrNotExist, "detail", "x="+testSecret)
	s.reports = make(chan api.StatusReport, 1)
	s.report(job.Preparing, "reason with "+testSecret)
	rep := <-s.reports
	if strings.Contains(rep.Reason, testSecret) || strings.Contains(strings.Join(s.takeWarnings(), " "), testSecret) {
		t.Fatalf("report %q / warnings hold the value", rep.Reason)
	}
	if strings.Contains(logged.String(), testSecret) || !strings.Contains(logged.String(), "***") {
		t.Fatalf("supervisor log:\n%s", logged.String())
	}
}

// A run naming no secret asks the server nothing.
func TestNoSecretsNoRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s", r.URL.Path)
	}))
	defer srv.Close()
	s := newTestSupervisor(t, srv.URL, 0)
	s.spec.Spec.EnvironmentVariables = map[string]string{"A": "b"}
	c, _, _ := newTestCapture(t)
	defer c.close()
	if err := s.loadSecrets(t.Context(), &pipeline{capt: c}); err != nil {
		t.Fatal(err)
	}
}
