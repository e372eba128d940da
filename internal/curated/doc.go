// Package curated maps Azure ML's curated environments (azureml:AzureML-<name>, registry
// references azureml://registries/<registry>/environments/<name>/...) to what a self-hosted
// workspace runs them in: the pure part of the owner-managed mapping (names, patterns, the
// built-in defaults, which mapping a name gets, and what a mapping runs in).
package curated
