package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/store"
)

// ownerField is a field of a compute spec that only owners may set or change: the server (or a
// node's agent, outside any run's box) runs it as a command, or loads the file it names from
// the server's machine. value is its canonical text, for comparing a spec with the stored one.
type ownerField struct {
	path, value, why string
}

// Why each kind of field is workspace configuration, in a refusal.
const (
	whyHook  = "is a command the server runs on its own machine, as its own user"
	whyEnv   = "is the environment of commands the server runs on its own machine (bash runs BASH_ENV's value)"
	whyType  = "makes the server run the provider's hooks on its own machine"
	whyFile  = "names a file on the server's machine that the server loads (a kubeconfig's exec plugins are commands it runs)"
	whyRead  = "names a file on the server's machine that the server reads (its parse errors quote words of the file)"
	whySlurm = "is run by the server on its own machine (a Slurm target without login: sbatch's options and " +
		"SLURM_CONF reach the batch script, which runs as the server's user outside any run's box)"
)

// ownerFields lists the owner-only fields a spec sets (pure). Provider hooks are the cluster's,
// the instance's and the serverless pool's create, delete and preempted command lines, their
// environment (bash reads BASH_ENV and the like before any command) and the command type itself.
// Setup scripts are not here: they run as runs of the instance, in the run box, with their text
// never bound (controller.scriptJob), as a contributor's job would.
func ownerFields(s *compute.Spec) []ownerField {
	var out []ownerField
	add := func(path, value, why string) {
		if value != "" {
			out = append(out, ownerField{path: path, value: value, why: why})
		}
	}
	provider := func(prefix string, p compute.Provider) {
		add(prefix+".create", p.Create, whyHook)
		add(prefix+".delete", p.Delete, whyHook)
		add(prefix+".preempted", p.Preempted, whyHook)
		if len(p.Env) > 0 {
			add(prefix+".env", canonical(p.Env), whyEnv)
		}
		if p.Type == compute.ProviderCommand {
			add(prefix+".type", p.Type, whyType)
		}
	}
	// Every part is looked at, whatever the type says: a body may carry several.
	if s.Cluster != nil {
		provider("cluster.provider", s.Cluster.Provider)
	}
	if s.Instance != nil {
		provider("instance.provider", s.Instance.Provider)
	}
	if s.Serverless != nil {
		provider("serverless.provider", s.Serverless.Provider)
	}
	if s.Kubernetes != nil {
		add("kubernetes.kubeconfig", s.Kubernetes.Kubeconfig, whyFile)
	}
	if s.SSH != nil {
		add("ssh.known_hosts", s.SSH.KnownHosts, whyRead)
	}
	if s.Slurm != nil && s.Slurm.Login != nil {
		add("slurm.login.known_hosts", s.Slurm.Login.KnownHosts, whyRead)
	}
	if s.Slurm != nil && s.Slurm.Login == nil {
		add("slurm.slurm_conf", s.Slurm.SlurmConf, whySlurm)
		if len(s.Slurm.SbatchArgs) > 0 {
			add("slurm.sbatch_args", canonical(s.Slurm.SbatchArgs), whySlurm)
		}
	}
	return out
}

// canonical is v as JSON (a map's keys sorted), for comparing.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// changedOwnerFields are the owner-only fields whose value differs between old (nil: none
// stored) and s, in s's order then old's.
func changedOwnerFields(old, s *compute.Spec) []ownerField {
	before := map[string]string{}
	var gone []ownerField
	if old != nil {
		for _, f := range ownerFields(old) {
			before[f.path] = f.value
			gone = append(gone, f)
		}
	}
	var out []ownerField
	now := map[string]bool{}
	for _, f := range ownerFields(s) {
		now[f.path] = true
		if before[f.path] != f.value {
			out = append(out, f)
		}
	}
	for _, f := range gone {
		if !now[f.path] {
			out = append(out, f) // removing a hook changes it too
		}
	}
	return out
}

// checkOwnerFields refuses a user below owner a spec that sets or changes an owner-only field
// (compared with the stored target of that name, so that a compute operator may still update a
// cluster an owner gave hooks to, leaving them as they are).
func (s *computeRoutes) checkOwnerFields(r *http.Request, spec *compute.Spec) error {
	p := who(r)
	if p.role == api.RoleOwner {
		return nil
	}
	var old *compute.Spec
	t, err := s.cfg.Store.Cluster.Compute(r.Context(), spec.Name)
	switch {
	case err == nil:
		st, err := compute.Load(*t)
		if err != nil {
			return err
		}
		old = &st.Spec
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	changed := changedOwnerFields(old, spec)
	if len(changed) == 0 {
		return nil
	}
	f, more := changed[0], ""
	if len(changed) > 1 {
		var paths []string
		for _, c := range changed[1:] {
			paths = append(paths, c.path)
		}
		more = " (so are " + strings.Join(paths, ", ") + ")"
	}
	return &httpError{http.StatusForbidden, api.CodeNotAllowed, fmt.Sprintf(
		"user %s has the role %s; %s %s: only the role %s may set or change it%s; it is workspace configuration (docs/security.md)",
		p.user, p.role, f.path, f.why, api.RoleOwner, more)}
}

// stampInstanceOwner makes a user the owner of the instance they create (the user its Jupyter
// and SSH admit, and whom its setup scripts' runs are submitted by), whatever the client
// claimed; an owner may create one on behalf of another user (create_on_behalf_of). The
// workspace token is the user admin, as for a job's submitter. An existing instance keeps its
// owner (workspace.instanceOwner).
func stampInstanceOwner(p principal, s *compute.Spec) error {
	if s.Instance == nil {
		return nil
	}
	on := s.Instance.CreateOnBehalfOf["user_object_id"]
	switch {
	case on == "" || on == p.user:
		s.Instance.Owner = p.user
	case p.role != api.RoleOwner:
		return &httpError{http.StatusForbidden, api.CodeNotAllowed, fmt.Sprintf(
			"user %s has the role %s; instance.create_on_behalf_of.user_object_id names %s: only the role %s creates an instance for another user",
			p.user, p.role, on, api.RoleOwner)}
	}
	return nil
}

// redactHookEnv replaces the values of a spec's provider environment (where a hook's cloud
// credentials go) with *** for a user below owner: they read the spec, not what only owners set.
func redactHookEnv(p principal, s *compute.Spec) {
	if s == nil || p.role == api.RoleOwner {
		return
	}
	var provs []*compute.Provider
	if s.Cluster != nil {
		provs = append(provs, &s.Cluster.Provider)
	}
	if s.Instance != nil {
		provs = append(provs, &s.Instance.Provider)
	}
	if s.Serverless != nil {
		provs = append(provs, &s.Serverless.Provider)
	}
	for _, prov := range provs {
		if len(prov.Env) == 0 {
			continue
		}
		env := make(map[string]string, len(prov.Env)) // a new map: the old one may be shared
		for k := range prov.Env {
			env[k] = redactedValue
		}
		prov.Env = env
	}
}

// redactedValue stands for a value a caller may not read.
const redactedValue = "***"
