package spec

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"time"
)

// A spec that sits in a git repository may also read what that repository tracks, outside its
// own folder: Azure's examples keep a conda file in a sibling folder (`../environment/conda.yml`)
// of the repository that holds both, and that file came with the spec. What the repository does
// not track (the user's untracked or ignored files: a `.env`, credentials) and anything outside
// it stay refused, so a spec from a repository still cannot publish the user's own files.

// gitTimeout bounds each git call (it reads the index; a slow disk must not hang a create).
const gitTimeout = 10 * time.Second

// trackedBySpecRepo reports whether real (absolute, links resolved) is a file, or a folder with
// files, that the git repository holding specDir tracks. Without git, or outside a repository,
// it is false.
func trackedBySpecRepo(specDir, real string) bool {
	top := gitOutput(specDir, "rev-parse", "--show-toplevel")
	if top == "" {
		return false
	}
	top = realDir(top)
	if !within(top, realDir(specDir)) || !within(top, real) {
		return false
	}
	rel, err := filepath.Rel(top, real)
	if err != nil {
		return false
	}
	// One tracked path is enough: --error-unmatch fails when none matches; the pathspec is
	// literal, so a name with glob characters matches only itself.
	return gitOutput(top, "ls-files", "--error-unmatch", "--", ":(literal)"+filepath.ToSlash(rel)) != ""
}

// gitOutput runs git in dir and returns its first output line, "" on any failure. The
// repository's own configuration cannot run a command here: ls-files and rev-parse run no
// hooks, and the file-system monitor and pager are turned off.
func gitOutput(dir string, args ...string) string {
	git, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	full := append([]string{"--no-pager", "-c", "core.fsmonitor=false", "-C", dir}, args...)
	cmd := exec.CommandContext(ctx, git, full...)
	cmd.Env = append(cmd.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := bytes.Cut(bytes.TrimSpace(out), []byte("\n"))
	return string(line)
}
