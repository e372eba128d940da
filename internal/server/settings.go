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

func (s *secretRoutes) listSettings(w http.ResponseWriter, r *http.Request) {
	out := map[string]string{}
	for _, prefix := range []string{workspace.SettingDefaultCompute, workspace.SettingEnvCacheMax, cluster.SettingUserMaxRuns, cluster.SettingQuotaPrefix} {
		m, err := s.cfg.Store.Settings(r.Context(), prefix)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		for k, v := range m {
			out[k] = v
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *secretRoutes) putSetting(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	var body struct {
		Value string `json:"value"`
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, s.log, err)
		return
	}
	if !settingAllowed(key, body.Value) {
		writeError(w, s.log, badRequest("setting "+key+": unknown, or "+strconv.Quote(body.Value)+" is not a valid value "+
			"(settings: default_compute, env_cache_max_bytes, user_max_runs, quota.family.<FAMILY> = cores)"))
		return
	}
	if key == workspace.SettingDefaultCompute && body.Value != compute.ServerlessName { // a pool or this machine's: there is always one
		if _, err := s.cfg.Store.Cluster.Compute(r.Context(), body.Value); err != nil {
			writeError(w, s.log, badRequest("default_compute: no compute target named "+body.Value))
			return
		}
	}
	if err := s.cfg.Store.SetSetting(r.Context(), key, body.Value); err != nil {
		writeError(w, s.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
