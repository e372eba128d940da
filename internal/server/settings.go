package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/backend/cluster"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// settingKeys are the workspace settings an admin may change, with a check of the value.
var settingKeys = map[string]func(string) bool{
	workspace.SettingDefaultCompute: func(v string) bool { return v != "" },
	workspace.SettingEnvCacheMax:    isUint,
	cluster.SettingUserMaxRuns:      isUint,
}

func isUint(v string) bool {
	_, err := strconv.ParseUint(v, 10, 63)
	return err == nil
}

func settingAllowed(key, value string) bool {
	if strings.HasPrefix(key, cluster.SettingQuotaPrefix) && len(key) > len(cluster.SettingQuotaPrefix) {
		f, err := strconv.ParseFloat(value, 64)
		return err == nil && f >= 0
	}
	check, ok := settingKeys[key]
	return ok && check(value)
}

func (s *secretRoutes) listSettings(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	for _, prefix := range []string{workspace.SettingDefaultCompute, workspace.SettingEnvCacheMax, cluster.SettingUserMaxRuns, cluster.SettingQuotaPrefix} {
		m, err := s.cfg.Store.Settings(r.Context(), prefix)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			out[k] = v
		}
	}
	return out, nil
}

// settingBody is a setting's new value. It stays an unnamed struct type (this is an alias): a
// malformed body's error names the type it was read into.
type settingBody = struct {
	Value string `json:"value"`
}

func (s *secretRoutes) putSetting(r *http.Request, body settingBody) error {
	key := r.PathValue("key")
	if !settingAllowed(key, body.Value) {
		return badRequest("setting " + key + ": unknown, or " + strconv.Quote(body.Value) + " is not a valid value " +
			"(settings: default_compute, env_cache_max_bytes, user_max_runs, quota.family.<FAMILY> = cores)")
	}
	if key == workspace.SettingDefaultCompute && body.Value != compute.ServerlessName { // a pool or this machine's: there is always one
		if _, err := s.cfg.Store.Cluster.Compute(r.Context(), body.Value); err != nil {
			return badRequest("default_compute: no compute target named " + body.Value)
		}
	}
	return s.cfg.Store.SetSetting(r.Context(), key, body.Value)
}
