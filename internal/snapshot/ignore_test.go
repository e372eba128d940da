package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScanIgnore(t *testing.T) {
	tests := []struct {
		name    string
		tree    map[string]string
		opts    ScanOptions
		want    []string
		ignored int
	}{
		{
			name: "defaults at any depth",
			tree: map[string]string{
				"a.py": "", ".git/config": "", "__pycache__/a.pyc": "", ".venv/bin/python": "",
				"sub/__pycache__/b.pyc": "", "sub/.git": "a file named .git",
			},
			want:    []string{"a.py", "sub/"},
			ignored: 5,
		},
		{
			name: "defaults cannot be negated",
			tree: map[string]string{".gitignore": "!.git\n!.venv/\n", ".git/HEAD": "", ".venv/x": ""},
			want: []string{".gitignore"},
		},
		{
			name: "no defaults",
			opts: ScanOptions{DefaultIgnores: []string{}},
			tree: map[string]string{".git/HEAD": "", "a": ""},
			want: []string{".git/", ".git/HEAD", "a"},
		},
		{
			name: "glob at any depth",
			tree: map[string]string{".gitignore": "*.log\n", "a.log": "", "sub/b.log": "", "sub/b.txt": ""},
			want: []string{".gitignore", "sub/", "sub/b.txt"},
		},
		{
			name: "negation",
			tree: map[string]string{".gitignore": "*.log\n!keep.log\n", "a.log": "", "keep.log": "", "sub/keep.log": ""},
			want: []string{".gitignore", "keep.log", "sub/", "sub/keep.log"},
		},
		{
			name: "anchored",
			tree: map[string]string{".gitignore": "/build\n", "build/x": "", "sub/build/y": ""},
			want: []string{".gitignore", "sub/", "sub/build/", "sub/build/y"},
		},
		{
			name: "pattern with a slash is anchored",
			tree: map[string]string{".gitignore": "data/raw\n", "data/raw/x": "", "data/clean": "", "sub/data/raw/y": ""},
			want: []string{".gitignore", "data/", "data/clean", "sub/", "sub/data/", "sub/data/raw/", "sub/data/raw/y"},
		},
		{
			name: "directory-only pattern",
			tree: map[string]string{".gitignore": "out/\n", "out/x": "", "sub/out": "a file", "sub/deep/out/y": ""},
			want: []string{".gitignore", "sub/", "sub/deep/", "sub/out"},
		},
		{
			name: "double star",
			tree: map[string]string{".gitignore": "**/ckpt/*.pt\nlogs/**\n", "ckpt/a.pt": "", "x/y/ckpt/b.pt": "", "x/y/ckpt/c.txt": "", "logs/1": ""},
			want: []string{".gitignore", "ckpt/", "x/", "x/y/", "x/y/ckpt/", "x/y/ckpt/c.txt"},
		},
		{
			name: "nested files add to their parents",
			tree: map[string]string{
				".gitignore": "*.tmp\n", "a.tmp": "", "sub/.gitignore": "!keep.tmp\n/data\n",
				"sub/keep.tmp": "", "sub/x.tmp": "", "sub/data": "", "sub/deep/data": "", "data": "",
			},
			want: []string{".gitignore", "data", "sub/", "sub/.gitignore", "sub/deep/", "sub/deep/data", "sub/keep.tmp"},
		},
		{
			name: "amlignore replaces gitignore in its directory",
			tree: map[string]string{".gitignore": "*.txt\n", ".amlignore": "*.log\n", "a.txt": "", "a.log": ""},
			want: []string{".amlignore", ".gitignore", "a.txt"},
		},
		{
			name: "hangarignore beats both",
			tree: map[string]string{".hangarignore": "*.bin\n", ".amlignore": "*.log\n", ".gitignore": "*.txt\n", "a.txt": "", "a.log": "", "a.bin": ""},
			want: []string{".amlignore", ".gitignore", ".hangarignore", "a.log", "a.txt"},
		},
		{
			name: "precedence is per directory",
			tree: map[string]string{
				".amlignore": "*.log\n", ".gitignore": "*.csv\n", "sub/.gitignore": "*.txt\n",
				"a.txt": "", "a.csv": "", "sub/b.txt": "", "sub/b.log": "", "sub/b.csv": "",
			},
			want: []string{".amlignore", ".gitignore", "a.csv", "a.txt", "sub/", "sub/.gitignore", "sub/b.csv"},
		},
		{
			name: "ignore files can ignore themselves",
			tree: map[string]string{".gitignore": ".gitignore\n", "a": ""},
			want: []string{"a"},
		},
		{
			name: "comments, blank lines and CRLF",
			tree: map[string]string{".gitignore": "# *.py\r\n\r\n*.log\r\n\\#x\n", "a.py": "", "b.log": "", "#x": ""},
			want: []string{".gitignore", "a.py"},
		},
		{
			name: "custom ignore files",
			opts: ScanOptions{IgnoreFiles: []string{".myignore"}},
			tree: map[string]string{".myignore": "*.a\n", ".gitignore": "*.b\n", "x.a": "", "x.b": ""},
			want: []string{".gitignore", ".myignore", "x.b"},
		},
		{
			name: "symlink to a directory is not a directory",
			tree: map[string]string{".gitignore": "lnk/\n", "d/x": "", "lnk": "-> d"},
			want: []string{".gitignore", "d/", "d/x", "lnk"},
		},
		{
			name: "an ignore file that is a directory is skipped",
			tree: map[string]string{".hangarignore/": "", ".gitignore": "*.log\n", "a.log": ""},
			want: []string{".gitignore", ".hangarignore/"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.tree)
			m, _, st := mustScan(t, dir, tt.opts)
			if diff := cmp.Diff(tt.want, paths(m)); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			if tt.ignored != 0 && st.Ignored != tt.ignored {
				t.Errorf("Ignored = %d, want %d", st.Ignored, tt.ignored)
			}
		})
	}
}
