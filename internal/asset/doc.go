// Package asset holds what every versioned workspace asset shares (registered models, data
// assets): names, integer versions, references such as azureml:name:3 and name@latest, and
// which version @latest and a listing pick; and Meta, the description, tags and properties of
// every Azure ML resource (assets, jobs, endpoints, deployments). It is pure: the store keeps
// the rows, the controller decides with these functions.
package asset
