package workspace

import (
	"testing"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/store"
)

func TestMayUse(t *testing.T) {
	limited := store.SecretAccess{Users: []string{"rita"}, Roles: []string{api.RoleContributor}}
	for _, tc := range []struct {
		name       string
		access     store.SecretAccess
		user, role string
		want       bool
	}{
		{"open, any submitter", store.SecretAccess{}, "bob", api.RoleContributor, true},
		{"open, no submitter recorded", store.SecretAccess{}, "", "", true},
		{"owners always", store.SecretAccess{Users: []string{"rita"}}, "olga", api.RoleOwner, true},
		{"a user listed", store.SecretAccess{Users: []string{"rita"}}, "rita", api.RoleContributor, true},
		{"a user not listed", store.SecretAccess{Users: []string{"rita"}}, "bob", api.RoleContributor, false},
		{"a role listed", limited, "bob", api.RoleContributor, true},
		{"another role", limited, "carl", api.RoleComputeOperator, false},
		{"a listed user deleted since", limited, "rita", "", false},
		{"no submitter recorded", limited, "", "", false},
	} {
		if got := mayUse(tc.access, tc.user, tc.role); got != tc.want {
			t.Errorf("%s: mayUse(%+v, %q, %q) = %v, want %v", tc.name, tc.access, tc.user, tc.role, got, tc.want)
		}
	}
}
