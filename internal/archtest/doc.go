// Package archtest keeps the documentation true to the code. Against docs/architecture.md: every
// package of the module has one row in its package table, each row's imports column is exactly
// the internal packages the package's non-test code imports, and no package imports one in a
// layer above its own (the layers are declared under "## Layers" there). Across the project's
// Markdown: every relative link names a file inside the repository, and a heading of it when it
// names one. `go test ./...` runs both checks on the real tree.
package archtest
