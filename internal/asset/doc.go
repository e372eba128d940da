// Package asset holds what every versioned workspace asset shares (registered models, data
// assets): names, integer versions, references such as azureml:name:3 and name@latest, and
// which version @latest and a listing pick. It is pure: the store keeps the rows, the
// controller decides with these functions.
package asset
