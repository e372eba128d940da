// Package scoring holds Hangar's scoring server for code_configuration deployments: a Python
// program (standard library only) that imports the deployment's scoring script, calls its
// init() once and its run(raw_data) for each POST /score, following the Azure ML inference
// server's contract (see score.py's docstring for what is and is not supported). It is
// embedded in the hangar binary; the supervisor writes it beside a replica's run.
package scoring

import (
	"bytes"
	_ "embed"
)

// FileName is the name the scoring server is written under. It is not score.py, the name
// most scoring scripts have, so that neither can import the other by mistake.
const FileName = "hangar_scoring_server.py"

//go:embed score.py
var script []byte

// Script returns the scoring server's source (a copy: callers may keep or change it).
func Script() []byte { return bytes.Clone(script) }
