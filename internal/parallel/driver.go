package parallel

import (
	"bytes"
	_ "embed"
)

// FileName is the name the driver is written under beside a run.
const FileName = "hangar_parallel_driver.py"

//go:embed driver.py
var driver []byte

// Driver returns the driver's source (a copy: callers may keep or change it).
func Driver() []byte { return bytes.Clone(driver) }
