package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/binding"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/store"
)

// Per-secret access (docs/secrets.md): a secret may be limited to users and roles; owners may
// always use it, and a secret limited to no one is open to every user who may submit jobs. The
// user whose access counts for a run is its submitter, which the server records in the run's
// spec (PropSubmitter, over whatever the client sent):
//   - a job: the user who submitted it (the workspace token's user, admin, is an owner);
//   - a sweep's trials and a pipeline's steps: the submitter of the sweep or pipeline;
//   - a deployment's replicas: the user who last created or updated the deployment;
//   - a batch endpoint's job: the user who invoked the endpoint.
//
// Access is checked when a job is submitted (and a deployment stored), and again when the run's
// supervisor fetches the values: a user whose access was removed, or who was deleted, while
// their run waited gets nothing, and the run fails in Preparing saying why.

// PropSubmitter is the property of a run's spec naming its submitter.
const PropSubmitter = "hangar.submitted_by"

// Submitter is the submitter a spec records ("" none: a run stored before submitters were).
func Submitter(sp *job.Spec) string { return sp.Properties[PropSubmitter] }

// StampSubmitter records user as the submitter in a spec's (or a deployment's) properties,
// over what they said ("" removes what they said); it returns the properties (made when nil).
func StampSubmitter(props map[string]string, user string) map[string]string {
	if user == "" {
		delete(props, PropSubmitter)
		return props
	}
	if props == nil {
		props = map[string]string{}
	}
	props[PropSubmitter] = user
	return props
}

// mayUse decides whether a user of role (current) may use a secret of access a.
func mayUse(a store.SecretAccess, user, role string) bool {
	if len(a.Users) == 0 && len(a.Roles) == 0 || role == api.RoleOwner {
		return true
	}
	return user != "" && role != "" && (slices.Contains(a.Users, user) || slices.Contains(a.Roles, role))
}

// accessOf is a stored access as the API shows it.
func accessOf(a store.SecretAccess) api.SecretAccess {
	return api.SecretAccess{Users: a.Users, Roles: a.Roles}
}

// userRole is the current role of user: owner for the workspace token's user, "" for no user
// (none recorded, or deleted since).
func (w *Workspace) userRole(ctx context.Context, user string) (string, error) {
	switch user {
	case "":
		return "", nil
	case api.AdminUser:
		return api.RoleOwner, nil
	}
	u, err := w.Store.Access.GetUser(ctx, user)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return u.Role, nil
}

// secretRefused says why user (of role; "" none) may not use secret s, named by variable v
// ("" when they may).
func secretRefused(s store.JobSecret, v, user, role string) string {
	if mayUse(s.Access, user, role) {
		return ""
	}
	who := fmt.Sprintf("user %s (role %s)", user, role)
	switch {
	case user == "":
		who = "this run records no submitter, and"
	case role == "":
		who = fmt.Sprintf("user %s is no longer a user of this workspace, and", user)
	}
	return fmt.Sprintf("environment_variables.%s: secret %s may be used by %s only; %s may not use it (an owner can allow it: hangar secret access %s --allow-user NAME)",
		v, s.Name, accessOf(s.Access), who, s.Name)
}

// checkSecretAccess refuses the first reference to a secret user may not use.
func (w *Workspace) checkSecretAccess(ctx context.Context, user string, refs []binding.SecretRef, have map[string]store.JobSecret) (string, error) {
	role, err := w.userRole(ctx, user)
	if err != nil {
		return "", err
	}
	for _, r := range refs {
		if s, ok := have[r.Name]; ok {
			if why := secretRefused(s, r.Var, user, role); why != "" {
				return why, nil
			}
		}
	}
	return "", nil
}

// checkAccessInput validates an access given to a secret: known roles, existing users; it
// returns it sorted, without repeats.
func (ss *Secrets) checkAccessInput(ctx context.Context, a api.SecretAccess) (store.SecretAccess, error) {
	out := store.SecretAccess{Users: sortedSet(a.Users), Roles: sortedSet(a.Roles)}
	for _, r := range out.Roles {
		if !slices.Contains(api.Roles, r) {
			return out, Invalidf("access.roles: %q is not a role (roles: %s)", r, orNone(api.Roles))
		}
	}
	for _, u := range out.Users {
		role, err := ss.ws.userRole(ctx, u)
		if err != nil {
			return out, err
		}
		if role == "" {
			return out, Invalidf("access.users: no user named %q in this workspace (see hangar user list)", u)
		}
	}
	return out, nil
}

func sortedSet(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
