package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// cacheKeyVersion starts every encoding, so a change to what the key covers (a new field) gives
// new keys instead of matching results computed under the old rules.
const cacheKeyVersion = "hangar-step-cache/1"

// CacheKey returns the step cache key: a SHA-256 (hex) over what makes the step's result
// reproducible, so a step whose key matches an earlier successful step may reuse its outputs.
// It covers the step's type and command (or its parallel or sweep settings), the code
// snapshot's hash, the environment's identity (a registered one's name and version, an inline
// one's image, conda and pip text), distribution and instance count, environment variables,
// each input's type and value, or its data's manifest hash (a URI with no manifest counts by
// the URI itself, as in Azure: files changed in place behind the same URI do not change the
// key; force_rerun covers that), and the output names and types.
//
// It leaves out what does not change the result: the display name, description, tags and
// properties, the component's name (two components with the same definition compute the same
// thing), limits, queue settings, and the compute and the rest of resources: a step's result
// does not depend on where it ran, so a step moved to another target still reuses its result.
//
// inputs holds the step's From inputs bound to their producers' outputs (manifest hashes); an
// entry replaces the same-named one in step.Spec.Inputs. CacheKey returns false when the step
// is not deterministic (is_deterministic: false), or when part of what it covers is not known
// yet: a code folder with no snapshot hash, a local data input with no manifest, a From input
// not bound, a conda or pip file not read, or an inline build context (whose files are not
// hashed here).
func CacheKey(step job.PipelineStep, inputs map[string]job.Input) (string, bool) {
	if !step.Deterministic {
		return "", false
	}
	c, ok := covered(step, inputs)
	if !ok {
		return "", false
	}
	// encoding/json writes struct fields in declaration order and map keys sorted, so the same
	// step always encodes to the same bytes.
	b, err := json.Marshal(c)
	if err != nil { // only a value json cannot encode (a NaN in a sweep's space) gets here
		return "", false
	}
	sum := sha256.Sum256(append([]byte(cacheKeyVersion+"\n"), b...))
	return hex.EncodeToString(sum[:]), true
}

// cacheInput is what of an input the key covers.
type cacheInput struct {
	Type     string `json:"type"`
	Value    string `json:"value,omitempty"`
	Manifest string `json:"manifest,omitempty"`
	URI      string `json:"uri,omitempty"`
	Mode     string `json:"mode,omitempty"`
}

// cacheEnv is an environment's identity.
type cacheEnv struct {
	Registered string `json:"registered,omitempty"` // name:version
	Ref        string `json:"ref,omitempty"`        // a reference the workspace did not resolve
	Image      string `json:"image,omitempty"`
	Conda      string `json:"conda,omitempty"`
	Pip        string `json:"pip,omitempty"`
	UserDeps   bool   `json:"user_managed,omitempty"`
	Python     string `json:"interpreter,omitempty"`
	OSType     string `json:"os_type,omitempty"`
}

// cacheSpec is everything the key covers; adding a field changes every key (bump
// cacheKeyVersion anyway, to say so).
type cacheSpec struct {
	Type          string                `json:"type"`
	Command       string                `json:"command"`
	Code          string                `json:"code,omitempty"`
	Environment   cacheEnv              `json:"environment"`
	Distribution  *job.Distribution     `json:"distribution,omitempty"`
	InstanceCount int                   `json:"instance_count"`
	Env           map[string]string     `json:"environment_variables,omitempty"`
	Inputs        map[string]cacheInput `json:"inputs,omitempty"`
	Outputs       map[string]string     `json:"outputs,omitempty"` // name → type
	Parallel      *job.ParallelRun      `json:"parallel,omitempty"`
	Sweep         *job.SweepRun         `json:"sweep,omitempty"`
}

func covered(step job.PipelineStep, bound map[string]job.Input) (cacheSpec, bool) {
	sp := step.Spec
	if sp.Code != "" && sp.CodeSnapshot == "" {
		return cacheSpec{}, false
	}
	env, ok := envIdentity(sp.Environment)
	if !ok {
		return cacheSpec{}, false
	}
	c := cacheSpec{
		Type: sp.Type, Command: sp.Command, Code: sp.CodeSnapshot, Environment: env,
		Distribution: sp.Distribution, InstanceCount: max(sp.Resources.InstanceCount, 1),
		Env: nonEmpty(sp.EnvironmentVariables), Parallel: sp.Parallel, Sweep: sp.Sweep,
	}
	for name := range step.From {
		if _, ok := bound[name]; !ok {
			return cacheSpec{}, false
		}
	}
	all := make(map[string]job.Input, len(sp.Inputs)+len(bound))
	for name, in := range sp.Inputs {
		all[name] = in
	}
	for name, in := range bound {
		all[name] = in
	}
	if len(all) > 0 {
		c.Inputs = make(map[string]cacheInput, len(all))
	}
	for name, in := range all {
		ci, ok := inputIdentity(in)
		if !ok {
			return cacheSpec{}, false
		}
		c.Inputs[name] = ci
	}
	if len(sp.Outputs) > 0 {
		c.Outputs = make(map[string]string, len(sp.Outputs))
	}
	for name, out := range sp.Outputs {
		c.Outputs[name] = defaultTo(out.Type, job.URIFolder)
	}
	return c, true
}

// inputIdentity is what an input's content is known by: a literal's value, data's manifest,
// or a URI; a local path not uploaded yet is not known.
func inputIdentity(in job.Input) (cacheInput, bool) {
	if in.IsLiteral() {
		return cacheInput{Type: in.Type, Value: in.Value}, true
	}
	ci := cacheInput{Type: defaultTo(in.Type, job.URIFolder), Mode: defaultTo(in.Mode, "ro_mount")}
	switch {
	case in.Manifest != "":
		ci.Manifest = in.Manifest
	case strings.Contains(in.Path, "://"):
		ci.URI = in.Path
	default:
		return cacheInput{}, false
	}
	return ci, true
}

// envIdentity names an environment: a registered version by name and version (versions do not
// change once created), anything else by its content.
func envIdentity(e job.Environment) (cacheEnv, bool) {
	if e.BuildPath != "" || (e.CondaFile != "" && e.CondaSpec == "") ||
		(e.Requirements != "" && e.RequirementsText == "") {
		return cacheEnv{}, false
	}
	id := cacheEnv{
		Image: e.Image, Conda: e.CondaSpec, Pip: e.RequirementsText,
		UserDeps: e.UserManagedDependencies, Python: e.InterpreterPath, OSType: e.OSType,
	}
	switch {
	case e.Name != "" && e.Version != "":
		id.Registered = fmt.Sprintf("%s:%s", e.Name, e.Version)
	case e.Ref != "":
		id.Ref = e.Ref
	}
	return id, true
}

func defaultTo(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// nonEmpty makes an empty map nil, so "no variables" encodes one way.
func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
