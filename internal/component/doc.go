// Package component holds components (Azure's commandComponent and pipelineComponent): a
// step's definition with typed, declared inputs, registered with integer versions like models
// and data assets (internal/asset), and the pure rules that use one in a pipeline: binding the
// values a step gives against the declarations (types, min, max, enum, defaults, optional
// inputs), and inlining a pipeline component's steps into the pipeline that uses it.
package component
