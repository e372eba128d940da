package binding

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A value is never put in a variable whose value a program runs, or loads code from, when it
// starts (issue 27): every form of assignment bash has, env and other NAME=VALUE arguments,
// names a value builds, and commands that store their input in such a variable.
func TestBindRefusesStartupVariables(t *testing.T) {
	const code = "$(id > /tmp/id_out)"
	bashEnv := "${{inputs.n}} would be put in BASH_ENV, a variable whose value is code (bash expands it and runs the file it names when a script starts), so no value is safe there; pass it another way, as an argument or in a variable of another name"
	tests := []struct {
		name, command, value, want string
	}{
		{"prefix (issue 27's reproduction)", "BASH_ENV=${{inputs.n}} bash x.sh", code, bashEnv},
		{"prefix, part of the word", "BASH_ENV=/tmp/${{inputs.n}} bash x.sh", code, bashEnv},
		{"prefix, double-quoted", `BASH_ENV="${{inputs.n}}" bash x.sh`, code, bashEnv},
		{"prefix, appended", "BASH_ENV+=${{inputs.n}} bash x.sh", code, bashEnv},
		{"array", "BASH_ENV=(${{inputs.n}}); bash x.sh", code, bashEnv},
		{"plain assignment", "BASH_ENV=${{inputs.n}}; bash x.sh", code, bashEnv},
		{"export", "export BASH_ENV=${{inputs.n}}", code, bashEnv},
		{"declare -x", "declare -x BASH_ENV=${{inputs.n}}", code, bashEnv},
		{"declare -x quoted", `declare -x "BASH_ENV=${{inputs.n}}"`, code, bashEnv},
		{"typeset", "typeset -x BASH_ENV=${{inputs.n}}", code, bashEnv},
		{"readonly", "readonly BASH_ENV=${{inputs.n}}", code, bashEnv},
		{"local", "f() { local BASH_ENV=${{inputs.n}}; }", code, bashEnv},
		{"builtin export", "builtin export BASH_ENV=${{inputs.n}}", code, bashEnv},
		{"command export", "command export BASH_ENV=${{inputs.n}}", code, bashEnv},
		{"env", "env BASH_ENV=${{inputs.n}} bash x.sh", code, bashEnv},
		{"env by path, after options", "/usr/bin/env -i -u X A=1 BASH_ENV=${{inputs.n}} bash x.sh", code, bashEnv},
		{"exec env", "exec env BASH_ENV=${{inputs.n}} bash x.sh", code, bashEnv},
		{"env behind a wrapper", "nohup env BASH_ENV=${{inputs.n}} bash x.sh", code, bashEnv},
		{"sudo", "sudo BASH_ENV=${{inputs.n}} bash x.sh", code, bashEnv},
		{"nested --env=", "docker run --env=BASH_ENV=${{inputs.n}} img", code, bashEnv},
		{"the value spells the assignment", "env ${{inputs.n}} bash x.sh", "BASH_ENV=" + code, bashEnv},
		{"the value builds the name", "env ${{inputs.n}}=x bash x.sh", "BASH_ENV", bashEnv},
		{"for loop variable", "for BASH_ENV in ${{inputs.n}}; do bash x.sh; done", code, bashEnv},
		{"read into it", "read -r BASH_ENV <<< ${{inputs.n}}", code, bashEnv},
		{"read into it from a process substitution", "read -r BASH_ENV < <(echo ${{inputs.n}})", code, bashEnv},
		{"printf -v into it", "printf -v BASH_ENV %s ${{inputs.n}}", code, bashEnv},
		{"mapfile into it", "mapfile BASH_ENV <<< ${{inputs.n}}", code, bashEnv},
		{"ENV", "ENV=${{inputs.n}} sh -i", code, "would be put in ENV, a variable whose value is code (sh, and bash in POSIX mode, expand it and run the file it names when they start)"},
		{"PROMPT_COMMAND", "PROMPT_COMMAND=${{inputs.n}} bash -i", code, "would be put in PROMPT_COMMAND"},
		{"PS1", "export PS1=${{inputs.n}}", code, "would be put in PS1"},
		{"SHELLOPTS", "SHELLOPTS=${{inputs.n}} bash x.sh", "xtrace", "would be put in SHELLOPTS"},
		{"BASHOPTS", "env BASHOPTS=${{inputs.n}} bash x.sh", "extdebug", "would be put in BASHOPTS"},
		{"IFS", "IFS=${{inputs.n}} read -r a b", ",", "would be put in IFS"},
		{"BASH_XTRACEFD", "BASH_XTRACEFD=${{inputs.n}} bash -x x.sh", "1", "would be put in BASH_XTRACEFD"},
		{"exported function", "env 'BASH_FUNC_ls%%=${{inputs.n}}' bash -c ls", "() { id; }", "would be put in BASH_FUNC_ls%%, a variable whose value is code (bash defines a function from it when it starts: an exported function)"},
		{"LD_PRELOAD", "LD_PRELOAD=${{inputs.n}} python t.py", "/tmp/x.so", "would be put in LD_PRELOAD, a variable whose value is code (the dynamic loader reads it when any program starts; LD_PRELOAD, LD_AUDIT and LD_LIBRARY_PATH load code from the files they name)"},
		{"LD_LIBRARY_PATH", "export LD_LIBRARY_PATH=${{inputs.n}}:$LD_LIBRARY_PATH", "/tmp", "would be put in LD_LIBRARY_PATH"},
		{"LD_AUDIT", "LD_AUDIT=${{inputs.n}} true", "/tmp/x.so", "would be put in LD_AUDIT"},
		{"another LD_ variable", "LD_DEBUG_OUTPUT=${{inputs.n}} true", "/tmp/x", "would be put in LD_DEBUG_OUTPUT"},
		{"GLIBC_TUNABLES", "GLIBC_TUNABLES=${{inputs.n}} true", "x", "would be put in GLIBC_TUNABLES"},
		{"PYTHONPATH", "PYTHONPATH=${{inputs.n}} python t.py", "/tmp", "would be put in PYTHONPATH, a variable whose value is code (Python imports modules from it as it starts, sitecustomize among them)"},
		{"PYTHONSTARTUP", "export PYTHONSTARTUP=${{inputs.n}}", "/tmp/x.py", "would be put in PYTHONSTARTUP"},
		{"NODE_OPTIONS", "NODE_OPTIONS=${{inputs.n}} node t.js", "--require /tmp/x.js", "would be put in NODE_OPTIONS"},
		{"PS4 as a name", "read ${{inputs.n}} <<< x", "PS4", "but PS4 is a variable whose value is code"},
		{"BASH_ENV as a name", "export ${{inputs.n}}=/etc/profile", "BASH_ENV", `${{inputs.n}} is used as a variable name (export), but BASH_ENV is a variable whose value is code (bash expands it and runs the file it names when a script starts); got "BASH_ENV"`},
		{"a name built from a value", "export BASH_${{inputs.n}}=/etc/profile", "ENV", "but BASH_ENV is a variable whose value is code"},
		{"a name built in an assignment", "LD_${{inputs.n}}=/tmp/x.so cmd", "PRELOAD", "but LD_PRELOAD is a variable whose value is code"},
		{"a name built in read", `read "LD_"${{inputs.n}} <<< x`, "PRELOAD", "but LD_PRELOAD is a variable whose value is code"},
		{"a name bash computes", `read "$p"${{inputs.n}} <<< x`, "ENV", "is part of a variable name (read) that bash puts together when it runs"},
		{"a declaration bash computes", `export "$name=${{inputs.n}}"`, "x", "is in an argument of export whose variable name bash computes when it runs"},
		{"env's computed name", `env "$name=${{inputs.n}}" bash x.sh`, "x", "is in an argument of env that bash puts together when it runs"},
		{"env -S", "env -S ${{inputs.n}}", "id", "runs as code (env -S, which splits it into a command to run)"},
		{"env option", "env ${{inputs.n}} bash", "-S id", "is where env reads its options, so its value must not start with -"},
		{"env glued option", "env --split-string=${{inputs.n}}", "id", "in an option of env is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Bind(tt.command, map[string]string{"inputs.n": tt.value})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Bind(%q, %q): got %v, want %q", tt.command, tt.value, err, tt.want)
			}
		})
	}
}

// Values in other variables, and in other arguments, still bind and reach the program.
func TestBindStartupVariablesLeaveOthersAlone(t *testing.T) {
	tests := []struct {
		command, value, want string
	}{
		{`OMP_NUM_THREADS=${{inputs.n}} bash -c 'printf %s "$OMP_NUM_THREADS"'`, "4", "4"},
		{`env DATA=${{inputs.n}} bash -c 'printf %s "$DATA"'`, "$(id)", "$(id)"},
		{`export MY_ENV=${{inputs.n}}; printf %s "$MY_ENV"`, "a b", "a b"},
		{`PATH=${{inputs.n}}:$PATH; printf %s "${PATH%%:*}"`, "/opt/tools/bin", "/opt/tools/bin"},
		{`printf %s --lr=${{inputs.n}}`, "0.01", "--lr=0.01"},
		{`printf %s ${{inputs.n}}`, "a=b", "a=b"},
		{`printf %s ENVIRONMENT=${{inputs.n}}`, "x", "ENVIRONMENT=x"},
		{`read -r MY_BASH_ENV <<< ${{inputs.n}}; printf %s "$MY_BASH_ENV"`, "$(id)", "$(id)"},
		{`env -u BASH_ENV X=${{inputs.n}} bash -c 'printf %s "$X"'`, "-1", "-1"},
		{`env -C / ${{inputs.n}} -n x`, "echo", "x"},
	}
	for _, tt := range tests {
		if got := runBound(t, tt.command, tt.value); got != tt.want {
			t.Errorf("%q with %q: bash printed %q, want %q", tt.command, tt.value, got, tt.want)
		}
	}
}

// The list the docs show is the list the binder uses.
func TestStartupVarNames(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "spec-extensions.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "### Variables whose value is code")
	table, _, _ = strings.Cut(table, "Not on the list")
	for _, name := range StartupVarNames() {
		if !strings.Contains(table, "`"+name+"`") {
			t.Errorf("docs/spec-extensions.md's table of variables whose value is code lacks `%s`", name)
		}
	}
	names := StartupVarNames()
	for _, want := range []string{"BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "BASH_FUNC_*", "LD_*", "PYTHONPATH"} {
		if !strings.Contains(strings.Join(names, " ")+" ", want+" ") {
			t.Errorf("StartupVarNames() lacks %s: %v", want, names)
		}
	}
	for _, name := range []string{"PATH", "PS3", "HOME", "OMP_NUM_THREADS", "LD", "BASH_ENVIRONMENT"} {
		if why := StartupVar(name); why != "" {
			t.Errorf("StartupVar(%q) = %q, want none", name, why)
		}
	}
}
