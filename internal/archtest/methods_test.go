package archtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maxMethods is how broad a type may be: past it, a type holds more than one noun (issue 29).
const maxMethods = 80

// knownBroad are the types over maxMethods for a while, each with why; the check fails once one
// is no longer over, so the list only shrinks.
var knownBroad = map[string]string{}

// No type in internal/ has a method set over maxMethods.
func TestNoTypeIsBroaderThanItsNoun(t *testing.T) {
	root, err := ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	module, err := moduleName(root)
	if err != nil {
		t.Fatal(err)
	}
	sets, err := MethodSets(root, "internal", module)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) < 100 {
		t.Fatalf("found %d named types under internal/; the walk missed the code", len(sets))
	}
	for _, p := range BroadTypes(sets, maxMethods, knownBroad) {
		t.Error(p)
	}
}

// Types split by noun hold their parent by a named field, never by embedding it (issue 29): a
// store aggregate (RunWrites, Runs, ...) embedding the Store would get all of it, RunWrites
// included, and a typed API client (JobClient, ModelClient, ...) embedding the Client would get
// every typed client and Client method (c.Jobs.Runs.Blobs): the split would be by name only.
func TestNoTypeEmbedsTheParentItWasSplitFrom(t *testing.T) {
	root, err := ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	module, err := moduleName(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ parent, what string }{
		{"internal/store.Store", "the store's Store, and with it every aggregate"},
		{"internal/api.Client", "the API's Client, and with it every typed client"},
	} {
		got, err := Embedders(root, "internal", module, tc.parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range got {
			t.Errorf("%s embeds %s: give it a named field for what it uses", name, tc.what)
		}
	}
}

// Method sets count promoted methods: embedding a broad type is not a way to split it.
func TestMethodSetsCountWhatIsPromoted(t *testing.T) {
	root := writeModule(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"internal/a/a.go": `package a
type Big struct{}
func (*Big) One() {}
func (*Big) Two() {}
func (Big) Three() {}
type Part struct{ *Big }
func (Part) Four() {}
type Reader interface{ Read(); Close() }
type ReadWriter interface{ Reader; Write() }
`,
		"internal/b/b.go": `package b
import (
	"sync"
	aa "example.com/m/internal/a"
)
type Wrap struct {
	aa.Part
	sync.Mutex
	x int
}
func (w *Wrap) One() {}
`,
		"internal/b/b_test.go": "package b\nfunc (w *Wrap) Test1() {}\n",
	})
	got, err := MethodSets(root, "internal", "example.com/m")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"internal/a.Big": 3, "internal/a.Part": 4, "internal/a.Reader": 2,
		"internal/a.ReadWriter": 3, "internal/b.Wrap": 4,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("method sets (-want +got):\n%s", d)
	}
	embedders, err := Embedders(root, "internal", "example.com/m", "internal/a.Big")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"internal/a.Part", "internal/b.Wrap"}, embedders); d != "" {
		t.Errorf("embedders of Big (-want +got):\n%s", d)
	}
	problems := BroadTypes(got, 3, map[string]string{"internal/a.Big": "x", "internal/b.Wrap": "y"})
	wantProblems := []string{
		"internal/a.Big has 3 methods now, not more than 3: remove it from the known broad types",
		"internal/a.Part has 4 methods (promoted ones included), more than 3: split it by noun",
	}
	if d := cmp.Diff(wantProblems, problems); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}
