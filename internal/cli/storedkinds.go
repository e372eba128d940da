package cli

import (
	"slices"
	"strings"
)

// The kinds of resource an update changes with --set and no file (storedset.go): where Azure's
// field names differ from what the workspace stores.

// renamed maps the paths that start with one of from's keys: the key's words are replaced.
func renamed(from map[string][]string) func([]string) []string {
	return func(path []string) []string {
		for n := len(path); n > 0; n-- {
			if to, ok := from[strings.Join(path[:n], ".")]; ok {
				return append(slices.Clone(to), path[n:]...)
			}
		}
		return path
	}
}

const uploadNeedsFile = "changing it uploads files: give the file (update -f FILE --set ...)"

var onlineEndpointKind = storedKind{
	noun: "online endpoint",
	alias: renamed(map[string][]string{
		"public_network_access": {"extra", "public_network_access"},
		"identity":              {"extra", "identity"},
	}),
}

var onlineDeploymentKind = storedKind{
	noun: "online deployment",
	alias: renamed(map[string][]string{
		"code_configuration.scoring_script": {"scoring_script"},
		"endpoint_name":                     {"endpoint_name"},
		"app_insights_enabled":              {"extra", "app_insights_enabled"},
		"egress_public_network_access":      {"extra", "egress_public_network_access"},
		"data_collector":                    {"extra", "data_collector"},
	}),
	needsFile: map[string]string{
		"model":                   "the model " + uploadNeedsFile,
		"code_configuration.code": "the code " + uploadNeedsFile,
	},
}

// batchSettings are a batch deployment's settings Azure's older files give at the top level.
var batchSettings = []string{"max_concurrency_per_instance", "mini_batch_size", "output_action", "output_file_name",
	"error_threshold", "logging_level", "environment_variables"}

var batchDeploymentKind = storedKind{
	noun: "batch deployment",
	alias: func() func([]string) []string {
		m := map[string][]string{
			"code_configuration.scoring_script":   {"scoring_script"},
			"resources.instance_count":            {"instance_count"},
			"retry_settings.max_retries":          {"settings", "max_retries"},
			"retry_settings.timeout":              {"settings", "timeout"},
			"settings.retry_settings.max_retries": {"settings", "max_retries"},
			"settings.retry_settings.timeout":     {"settings", "timeout"},
		}
		for _, s := range batchSettings {
			m[s] = []string{"settings", s}
		}
		return renamed(m)
	}(),
	needsFile: map[string]string{
		"model":                   "the model " + uploadNeedsFile,
		"code_configuration.code": "the code " + uploadNeedsFile,
	},
}

var batchEndpointKind = storedKind{
	noun:  "batch endpoint",
	alias: renamed(map[string][]string{"defaults.deployment_name": {"default_deployment"}}),
}

// computeTopLevel are the fields every compute target has; the others are its kind's
// (amlcompute's under "cluster", and so on).
var computeTopLevel = []string{"name", "type", "description", "tags", "location", "resource_id", "identity"}

// computeKind is the kind of a stored target whose own settings are under sub ("cluster", ...).
func computeKind(sub string) storedKind {
	return storedKind{
		noun: "compute target",
		alias: func(path []string) []string {
			if sub == "" || slices.Contains(computeTopLevel, path[0]) {
				return path
			}
			return append([]string{sub}, path...)
		},
		needsFile: map[string]string{"type": "a target's type cannot change: delete it and create another"},
	}
}
