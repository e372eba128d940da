package spec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A file a spec names and the CLI puts in the spec (conda_file, requirements, component files,
// setup scripts) is read only inside the spec's folder, links resolved; a path given with --set,
// or a wider folder given with Root (--spec-root), may lie elsewhere (issue 27).
func TestSpecReadsStayInItsFolder(t *testing.T) {
	top := realDir(t.TempDir()) // messages name folders with their links resolved
	outside := filepath.Join(top, "secret.yml")
	writeFile(t, outside, "dependencies: [leaked]\n")
	proj := filepath.Join(top, "proj")
	writeFile(t, filepath.Join(proj, "env", "conda.yml"), "dependencies: [python]\n")
	writeFile(t, filepath.Join(proj, "req.txt"), "numpy\n")
	writeFile(t, filepath.Join(proj, "c.yml"), "name: c\ncommand: echo hi\nenvironment: {image: x, conda_file: ../secret.yml}\n")
	if err := os.Symlink(outside, filepath.Join(proj, "link.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(proj, "env", "conda.yml"), filepath.Join(proj, "inner.yml")); err != nil {
		t.Fatal(err)
	}
	const hint = "and not a file the spec's git repository tracks: a spec reads files only there, so that a spec from elsewhere cannot publish your files to the workspace"
	refused := []struct {
		name, yml, want string
	}{
		{"absolute conda_file", "command: echo\nenvironment: {image: x, conda_file: " + outside + "}\n",
			"job.yml: environment.conda_file: " + outside + " is outside " + proj + ", the folder of job.yml, " + hint +
				"; give the path on the command line (--set environment.conda_file=" + outside + ") or allow a wider folder with --spec-root DIR (line 2)"},
		{"conda_file up a folder", "command: echo\nenvironment: {image: x, conda_file: ../secret.yml}\n",
			"job.yml: environment.conda_file: ../secret.yml is outside " + proj},
		{"a link leading out", "command: echo\nenvironment: {image: x, conda_file: link.yml}\n",
			"job.yml: environment.conda_file: link.yml (a link to " + outside + ") is outside " + proj},
		{"requirements", "command: echo\nenvironment: {image: x, requirements: ../secret.yml}\n",
			"job.yml: environment.requirements: ../secret.yml is outside " + proj},
		{"component file", "type: pipeline\njobs:\n  a: {component: ../secret.yml}\n",
			"job.yml: jobs.a.component: ../secret.yml is outside " + proj},
		{"a component's own conda file", "type: pipeline\njobs:\n  a: {component: ./c.yml}\n",
			"c.yml: environment.conda_file: ../secret.yml is outside " + proj + ", the folder of job.yml, " + hint + "; allow a wider folder with --spec-root DIR"},
		{"an inline step's conda file", "type: pipeline\njobs:\n  a: {command: echo, environment: {image: x, conda_file: ../secret.yml}}\n",
			"job.yml: jobs.a.environment.conda_file: ../secret.yml is outside " + proj + ", the folder of job.yml, " + hint +
				"; give the path on the command line (--set jobs.a.environment.conda_file=../secret.yml)"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ParseJob("job.yml", []byte(tt.yml), proj, nil)
			checkErr(t, err, tt.want)
			if strings.Contains(err.Error(), "leaked") {
				t.Errorf("the message shows the file's text: %v", err)
			}
		})
	}
	allowed := []struct {
		name, yml string
		sets      []string
		opts      []FileOption
	}{
		{"inside", "command: echo\nenvironment: {image: x, conda_file: env/conda.yml, requirements: req.txt}\n", nil, nil},
		{"a link inside", "command: echo\nenvironment: {image: x, conda_file: inner.yml}\n", nil, nil},
		{"given with --set", "command: echo\nenvironment: {image: x}\n", []string{"environment.conda_file=" + outside}, nil},
		{"replaced with --set", "command: echo\nenvironment: {image: x, conda_file: env/conda.yml}\n", []string{"environment.conda_file=../secret.yml"}, nil},
		{"under --spec-root", "command: echo\nenvironment: {image: x, conda_file: ../secret.yml}\n", nil, []FileOption{Root(top)}},
		{"a component under --spec-root", "type: pipeline\njobs:\n  a: {component: ./c.yml}\n", nil, []FileOption{Root(top)}},
	}
	for _, tt := range allowed {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := ParseJob("job.yml", []byte(tt.yml), proj, tt.sets, tt.opts...); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
}

// A compute instance's setup scripts, and a standalone environment's files, follow the same rule.
func TestSpecReadsStayInItsFolderOtherSpecs(t *testing.T) {
	top := realDir(t.TempDir())
	writeFile(t, filepath.Join(top, "setup.sh"), "echo hi\n")
	writeFile(t, filepath.Join(top, "conda.yml"), "dependencies: []\n")
	proj := filepath.Join(top, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := ParseCompute("compute.yml", []byte("name: ci1\ntype: instance\nsetup_scripts:\n  creation_script: {path: ../setup.sh}\n"), proj, nil)
	checkErr(t, err, "compute.yml: setup_scripts.creation_script.path: ../setup.sh is outside "+proj+", the folder of compute.yml")
	_, _, err = ParseEnvironment("env.yml", []byte("name: e\nimage: x\nconda_file: ../conda.yml\n"), proj, nil)
	checkErr(t, err, "env.yml: conda_file: ../conda.yml is outside "+proj+", the folder of env.yml")
	if _, _, err := ParseEnvironment("env.yml", []byte("name: e\nimage: x\nconda_file: ../conda.yml\n"), proj, nil, Root(top)); err != nil {
		t.Errorf("under --spec-root: %v", err)
	}
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A spec in a git repository may read what the repository tracks outside its own folder (Azure's
// examples keep conda files in sibling folders); the repository's untracked and ignored files,
// links out of it and anything outside it stay refused.
func TestSpecReadsWhatItsRepositoryTracks(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed")
		}
		t.Skip("git is not installed")
	}
	top := realDir(t.TempDir())
	outside := filepath.Join(top, "secret.yml")
	writeFile(t, outside, "dependencies: [leaked]\n")
	repo := filepath.Join(top, "repo")
	proj := filepath.Join(repo, "jobs", "train")
	writeFile(t, filepath.Join(repo, "environment", "conda.yml"), "dependencies: [python]\n")
	writeFile(t, filepath.Join(repo, "environment", "local.yml"), "dependencies: [untracked]\n")
	writeFile(t, filepath.Join(repo, ".env.yml"), "dependencies: [ignored]\n")
	writeFile(t, filepath.Join(repo, ".gitignore"), ".env.yml\n")
	writeFile(t, filepath.Join(proj, "job.yml"), "")
	if err := os.Symlink(outside, filepath.Join(repo, "environment", "out.yml")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "jobs", "environment/conda.yml", "environment/out.yml", ".gitignore"}} {
		if out, err := exec.Command(git, append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	job := func(conda string) string {
		return "command: echo\nenvironment: {image: x, conda_file: " + conda + "}\n"
	}
	if _, _, err := ParseJob("job.yml", []byte(job("../../environment/conda.yml")), proj, nil); err != nil {
		t.Errorf("a file the repository tracks, in a sibling folder: %v", err)
	}
	for _, conda := range []string{"../../environment/local.yml", "../../.env.yml", "../../environment/out.yml", "../../../secret.yml", outside} {
		_, _, err := ParseJob("job.yml", []byte(job(conda)), proj, nil)
		checkErr(t, err, "job.yml: environment.conda_file: "+conda)
		if err != nil && !strings.Contains(err.Error(), "not a file the spec's git repository tracks") {
			t.Errorf("%s: %v", conda, err)
		}
	}
}
