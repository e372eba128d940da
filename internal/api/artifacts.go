package api

import "strings"

// CollectedLogDirs are the folders of a run's artifacts that hold the logs Hangar itself
// collects from the run: user_logs/ (its processes' output) and system_logs/ (Hangar's own
// lines). No file logged through the MLflow API is ever stored, listed or downloaded there, so
// that what they hold is always Hangar's.
var CollectedLogDirs = []string{"user_logs", "system_logs"}

// CollectedLogDir is the folder of CollectedLogDirs that artifact path p (slash-separated,
// relative to the run's artifact root) lies in or names, if any.
func CollectedLogDir(p string) (string, bool) {
	for _, d := range CollectedLogDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d, true
		}
	}
	return "", false
}
