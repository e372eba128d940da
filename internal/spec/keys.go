package spec

// Keys that --set may create when absent (SPEC.md §2 and §6): "*" matches any key (a
// free-form map), "{}" an entry that must already exist (an input or output).
var (
	envKeys = []string{
		"name", "version", "description", "tags.*", "image", "conda_file", "build.path",
		"build.dockerfile_path", "os_type", "requirements", "user_managed_dependencies", "interpreter_path",
	}
	jobKeys = append([]string{
		"type", "name", "display_name", "experiment_name", "description", "tags.*", "properties.*",
		"command", "code", "compute", "environment_variables.*", "parent_job_name",
		"inputs.{}.type", "inputs.{}.path", "inputs.{}.mode", "inputs.{}.datastore", "inputs.{}.description",
		"inputs.{}.default", "inputs.{}.value", "inputs.{}.optional", "inputs.{}.min", "inputs.{}.max",
		"outputs.{}.type", "outputs.{}.mode", "outputs.{}.path", "outputs.{}.name", "outputs.{}.version",
		"outputs.{}.description",
		"resources.instance_count", "resources.instance_type", "resources.shm_size", "resources.docker_args",
		"resources.max_instance_count", "resources.properties.*",
		"limits.timeout",
		"distribution.type", "distribution.process_count_per_instance", "distribution.worker_count",
		"distribution.parameter_server_count", "distribution.address", "distribution.port",
		"distribution.dashboard_port", "distribution.include_dashboard",
		"distribution.head_node_additional_args", "distribution.worker_node_additional_args",
		"queue_settings.job_tier", "queue_settings.priority",
		"identity.type", "identity.client_id", "identity.object_id", "identity.resource_id",
		"services.*", "services.{}.type", "services.{}.port", "services.{}.nodes", "services.{}.log_dir",
		"services.{}.ssh_public_keys", "services.{}.properties.*",
	}, prefixed("environment.", envKeys)...)
)

func prefixed(prefix string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = prefix + k
	}
	return out
}
