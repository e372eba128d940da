// Package spec decodes and validates Azure ML CLI v2 compatible YAML specs into Hangar's job types, reporting every problem with its file, field path and line.
package spec
