package runbox

import (
	"fmt"
	"strconv"
)

func fmtSscan(s string, p *int) (int, error) { return fmt.Sscan(s, p) }
func itoa(n int) string                      { return strconv.Itoa(n) }
