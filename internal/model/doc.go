// Package model holds registered models (design record 0014): a name, integer versions, the
// content-addressed manifest of the model's files and where they came from, and the pure
// parsing of references such as azureml:name:3 and name@latest.
package model
