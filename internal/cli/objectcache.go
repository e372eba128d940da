package cli

import (
	"fmt"

	"github.com/hangar-ml/hangar/internal/resources"
)

// ObjectCacheSize is the --object-cache flag of `hangar server` and `hangar agent`: the most the
// node's cache of objects read from object stores keeps (api.SupervisorConfig.ObjectCacheBytes):
// a size such as 50Gi, "unlimited" (-1), or unset (0: a share of its disk).
type ObjectCacheSize int64

const objectCacheHelp = "the most the node's cache of objects read from object stores keeps, e.g. 50Gi, or unlimited (default: 10% of its disk)"

func (s *ObjectCacheSize) String() string {
	switch {
	case *s < 0:
		return "unlimited"
	case *s == 0:
		return ""
	}
	return fmt.Sprint(int64(*s))
}

func (s *ObjectCacheSize) Set(v string) error {
	if v == "unlimited" {
		*s = -1
		return nil
	}
	n, err := resources.ParseMemory(v)
	if err != nil {
		return err
	}
	if n <= 0 {
		return fmt.Errorf("%q: want a size above 0, or unlimited", v)
	}
	*s = ObjectCacheSize(n)
	return nil
}

func (s *ObjectCacheSize) Type() string { return "size" }

// ObjectCacheHelp is the flag's help text, the same for the server and the agent.
func ObjectCacheHelp() string { return objectCacheHelp }
