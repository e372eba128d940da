package objstore

import "time"

// PruneEverything prunes c to nothing, not even sparing what was just used: the harshest pruner
// a download can meet.
func PruneEverything(c *Cache) (Pruned, error) {
	return c.prune(pruneRule{Limit: 0, StaleTemp: time.Hour}, time.Now())
}
