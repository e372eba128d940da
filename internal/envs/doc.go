// Package envs materializes job environments on a node: managed Python environments built once from a conda file or pip requirements and cached by content hash, and the user's own interpreter.
package envs
