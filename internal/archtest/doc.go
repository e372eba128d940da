// Package archtest keeps the documentation true to the code. Against docs/architecture.md: every
// package of the module has one row in its package table, each row's imports column is exactly
// the internal packages the package's non-test code imports, and no package imports one in a
// layer above its own (the layers are declared under "## Layers" there). Across the project's
// Markdown: every relative link names a file inside the repository, and a heading of it when it
// names one. In the code: no type under internal/ has a method set (promoted methods included)
// over 80, past which a type holds more than one noun; and nothing but the run core
// (internal/controller) and the store reaches the store's run-row writers (RunWrites). `go test ./...` runs the checks on the
// real tree.
package archtest
