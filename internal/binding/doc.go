// Package binding places values into a job's command: ${{inputs.x}} / ${{outputs.y}}
// references and $[[ ... ]] optional segments (Bind), each value written for where bash reads
// it through a bash parser (mvdan.cc/sh), and ${{secrets.<name>}} references in environment
// variables (SecretRefs, BindSecrets). It is what the node needs of a spec: the supervisor binds
// with it, and package spec checks commands with it at decode time, so binding imports no
// decoder.
package binding
