package binding

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// evil runs a command when bash evaluates it as arithmetic or as a variable name, even
// from inside quotes (issue 10).
const evil = "a[$(touch CANARY)]"

// Where bash evaluates text even when it is quoted, a value is checked (an integer, a
// name) or refused; each message says where and why.
func TestBindRefusesEvaluatedValues(t *testing.T) {
	for _, tt := range evaluatedValueTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Bind(tt.command, map[string]string{"inputs.n": tt.value, "inputs.m": "touch CANARY"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

var evaluatedValueTests = []struct {
	name, command, value, want string
}{
	// the six reproductions of issue 10
	{"arithmetic expansion", "echo $(( ${{inputs.n}} + 1 ))", evil, `${{inputs.n}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "a[$(touch CANARY)]"`},
	{"arithmetic command", "(( ${{inputs.n}} + 1 )); echo ok", evil, `${{inputs.n}} is used in bash arithmetic (an (( )) command), so its value must be an integer; got "a[$(touch CANARY)]"`},
	{"let", `let "x=${{inputs.n}}"`, evil, `${{inputs.n}} is used in bash arithmetic (let), so its value must be an integer; got "a[$(touch CANARY)]"`},
	{"declare -i", "declare -i x=${{inputs.n}}", evil, `${{inputs.n}} is used in bash arithmetic (declare -i), so its value must be an integer; got "a[$(touch CANARY)]"`},
	{"test -eq", "a=1; [[ $a -eq ${{inputs.n}} ]]", evil, `${{inputs.n}} is used in bash arithmetic ([[ -eq ]]), so its value must be an integer; got "a[$(touch CANARY)]"`},
	{"not a number", "echo $(( ${{inputs.n}} * 2 ))", "0.5", `${{inputs.n}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "0.5"`},
	// more arithmetic
	{"old arithmetic", "echo $[ ${{inputs.n}} ]", evil, "bash arithmetic ($[ ])"},
	{"quoted in arithmetic", `echo "$(( "${{inputs.n}}" ))"`, evil, "bash arithmetic ($(( )))"},
	{"through a command substitution", "echo $(( $(printf %s ${{inputs.n}}) ))", evil, "bash arithmetic ($(( )))"},
	{"let unquoted", "let x=${{inputs.n}}", evil, "bash arithmetic (let)"},
	{"typeset -i", "typeset -i x=${{inputs.n}}", evil, "bash arithmetic (typeset -i)"},
	{"local -i", "f() { local -i x=${{inputs.n}}; }; f", evil, "bash arithmetic (local -i)"},
	{"builtin declare -i", "builtin declare -i x=${{inputs.n}}", evil, "bash arithmetic (declare -i)"},
	{"integer variable", "declare -i x; x=${{inputs.n}}", evil, "bash arithmetic (an assignment to integer variable x)"},
	{"integer loop variable", "declare -i x; for x in ${{inputs.n}}; do :; done", evil, "bash arithmetic (a loop over integer variable x)"},
	{"RANDOM", "RANDOM=${{inputs.n}}", evil, "bash arithmetic (an assignment to integer variable RANDOM)"},
	{"integer array", "declare -ai a=(${{inputs.n}})", evil, "bash arithmetic (declare -i)"},
	{"test -lt", "[[ ${{inputs.n}} -lt 3 ]]", evil, "bash arithmetic ([[ -lt ]])"},
	{"subscript assignment", "a[${{inputs.n}}]=1", evil, "bash arithmetic (an array subscript)"},
	{"subscript in compound assignment", "a=([${{inputs.n}}]=1)", evil, "bash arithmetic (an array subscript)"},
	{"c-style for", "for (( i=${{inputs.n}}; 0; )); do :; done", evil, "bash arithmetic (for (( )))"},
	// variable names
	{"test -v", "[[ -v ${{inputs.n}} ]]", evil, `${{inputs.n}} is used as a variable name ([[ -v ]]), so its value must be a name of letters, digits and _ not starting with a digit; got "a[$(touch CANARY)]"`},
	{"builtin test -v", "test -v ${{inputs.n}}", evil, "variable name (test -v)"},
	{"bracket -v", "[ -v ${{inputs.n}} ]", evil, "variable name ([ -v)"},
	{"printf -v", "printf -v ${{inputs.n}} %s x", evil, "variable name (printf -v)"},
	{"read", "read -r ${{inputs.n}} <<< x", evil, "variable name (read)"},
	{"read -a", "read -a ${{inputs.n}} <<< x", evil, "variable name (read -a)"},
	{"unset", "unset ${{inputs.n}}", evil, "variable name (unset)"},
	{"declare name", "declare ${{inputs.n}}=1", evil, "variable name (declare)"},
	{"declare quoted name", `declare "${{inputs.n}}=1"`, evil, "variable name (declare)"},
	{"local name", "f() { local ${{inputs.n}}=1; }; f", evil, "variable name (local)"},
	{"nameref", "declare -n r=${{inputs.n}}", evil, "variable name (declare -n)"},
	{"assignment name", "${{inputs.n}}=1", evil, "variable name (an assignment)"},
	{"for variable", "for ${{inputs.n}} in a; do :; done", evil, "variable name (a for loop variable)"},
	{"getopts", "getopts ab ${{inputs.n}}", evil, "variable name (getopts)"},
	{"integer variable name", "read ${{inputs.n}} <<< x", "OPTIND", `${{inputs.n}} is used as a variable name (read), but OPTIND may have the integer attribute (or be a name reference), so bash would evaluate what is assigned to it; got "OPTIND"`},
	{"traced variable name", "read ${{inputs.n}} <<< x", "PS4", `${{inputs.n}} is used as a variable name (read), but PS4 is a variable whose value is code (bash expands it, command substitutions included, when it prints a trace under set -x); got "PS4"`},
	// code
	{"eval", "eval ${{inputs.n}}", "ls", `${{inputs.n}} is in text that bash runs as code (eval), so no value is safe there; assign it to a variable first (v=${{inputs.n}}) and use "$v" inside that code`},
	{"eval quoted", `eval "echo ${{inputs.n}}"`, "x", "runs as code (eval)"},
	{"builtin eval", "builtin eval ${{inputs.n}}", "x", "runs as code (eval)"},
	{"command eval", "command -p eval ${{inputs.n}}", "x", "runs as code (eval)"},
	{"trap", `trap "rm -f ${{inputs.n}}" EXIT`, "x", "runs as code (trap)"},
	{"bash -c", `bash -ec "python t.py ${{inputs.n}}"`, "x", `runs as code (bash -c), so no value is safe there; pass it as an argument instead: bash -c '... "$1"' _ ${{inputs.n}}`},
	{"sh -c after options", "sh -o errexit -c ${{inputs.n}}", "x", "runs as code (sh -c)"},
	{"here-document into bash", "bash <<EOF\necho ${{inputs.n}}\nEOF", "x", "runs as code (a script that bash reads from its input)"},
	{"here-string into source", "source /dev/stdin <<< ${{inputs.n}}", "x", "runs as code (a script that source reads from its input)"},
	{"piped into sh", "echo ${{inputs.n}} | sh", "x", "runs as code (piped into sh)"},
	{"process substitution sourced", "source <(echo ${{inputs.n}})", "x", "runs as code (a script that source reads)"},
	{"mapfile callback", "mapfile -t -C ${{inputs.n}} a < /dev/null", "x", "runs as code (mapfile -C)"},
	{"compgen", "compgen -W ${{inputs.n}}", "x", "runs as code (compgen)"},
	{"PS4", "PS4=${{inputs.n}}; set -x", "x", "${{inputs.n}} would be put in PS4, a variable whose value is code (bash expands it, command substitutions included, when it prints a trace under set -x), so no value is safe there; pass it another way, as an argument or in a variable of another name"},
	{"declare re-reads arrays", `declare -a arr="(${{inputs.n}})"`, "x", "${{inputs.n}} is in a value that declare reads as an array assignment and expands again; write declare arr=( ... ) without quotes instead"},
	{"declare value like an array", "declare -a arr=${{inputs.n}}", "($(id))", `${{inputs.n}} is assigned by declare, which reads a value starting with ( as an array assignment and expands it again; got "($(id))"`},
	// options and command names that change how the other words are read
	{"option of printf", "printf ${{inputs.n}} x %s", "-v", `${{inputs.n}} is where printf reads its options, so its value must not start with -; got "-v"`},
	{"option of bash", "bash ${{inputs.n}} ${{inputs.m}}", "-c", "is where bash reads its options"},
	{"test -v from a value", "[ ${{inputs.n}} ${{inputs.m}} ]", "-v", `${{inputs.n}} is an argument of [, where -v makes the next argument a variable name that bash evaluates; got "-v"`},
	{"command name", "${{inputs.n}} ${{inputs.m}}", "eval", `${{inputs.n}} is the command name, so its value must not make it the bash builtin eval, which reads its arguments as code or variable names; got "eval"`},
	{"command name spelled", "ev${{inputs.n}} ${{inputs.m}}", "al", "must not make it the bash builtin eval"},
	{"glued option", "read -p${{inputs.n}} x", "x", "${{inputs.n}} in an option of read is not supported"},
	// places Hangar does not quote for
	{"variable name run-on", "echo $HOME${{inputs.n}}", "x", "${{inputs.n}} right after $HOME would be read as part of that variable's name; write ${HOME}${{inputs.n}}"},
	{"subscript in expansion", "echo ${a[${{inputs.n}}]}", evil, "bash arithmetic (an array subscript)"},
	{"subscript in arithmetic", "echo $(( a[${{inputs.n}}] ))", evil, "bash arithmetic ($(( )))"},
	{"offset", "echo ${x:${{inputs.n}}}", evil, "bash arithmetic (${x:offset:length})"},
	{"length", `echo "${x:1:${{inputs.n}}}"`, evil, "bash arithmetic (${x:offset:length})"},
	{"default value", "echo ${x:-${{inputs.n}}}", "1", "${{inputs.n}} inside ${...} is not supported"},
	{"function name", "${{inputs.n}}() { :; }", "f", "${{inputs.n}} as a function name is not supported"},
	{"descriptor variable", "exec {${{inputs.n}}}>/dev/null", "fd", "${{inputs.n}} in a file descriptor variable ({name}>) is not supported"},
	{"not bash", "echo ${{inputs.n}} )", "x", "command is not valid bash (line 1: a command can only contain words and redirects; encountered `)`), so values cannot be placed in it safely"},
}

// Integers in arithmetic and names in name positions still bind, and bash runs them.
func TestBindCheckedValuesRun(t *testing.T) {
	tests := []struct {
		command, value, want string
	}{
		{"echo $(( ${{inputs.n}} + 1 ))", "41", "42\n"},
		{"echo $(( ${{inputs.n}} + 1 ))", "-3", "-2\n"},
		{"(( ${{inputs.n}} > 2 )) && echo big", "7", "big\n"},
		{`let "x=${{inputs.n}} * 2"; echo $x`, "21", "42\n"},
		{"declare -i x=${{inputs.n}}; echo $x", "5", "5\n"},
		{"a=1; [[ $a -eq ${{inputs.n}} ]] && echo same", "1", "same\n"},
		{"a=(x y z); a[${{inputs.n}}]=Y; echo ${a[@]}", "1", "x Y z\n"},
		{"a=(x y z); echo ${a[${{inputs.n}}]} $(( a[${{inputs.n}}] + 1 ))", "2", "z 1\n"},
		{`x=abcdef; echo "${x:${{inputs.n}}:2}"`, "-3", "de\n"},
		{"echo $(( 1 -${{inputs.n}} ))", "-3", "4\n"},
		{"for (( i=${{inputs.n}}; i<3; i++ )); do echo $i; done", "1", "1\n2\n"},
		{"read ${{inputs.n}} <<< hi; echo $greeting", "greeting", "hi\n"},
		{"printf -v ${{inputs.n}} %s ok; echo $v", "v", "ok\n"},
		{"x=1; [[ -v ${{inputs.n}} ]] && echo set", "x", "set\n"},
		{"declare -n r=${{inputs.n}}; target=t; echo $r", "target", "t\n"},
		{"bash -c 'printf %s \"$1\"' _ ${{inputs.n}}", evil, evil},
		{"trap 'echo \"$v\"' EXIT; v=${{inputs.n}}", evil, evil + "\n"},
		{"declare x=${{inputs.n}}; printf %s \"$x\"", evil, evil},
		{"${{inputs.n}} -n x", "echo", "x"},
	}
	for _, tt := range tests {
		got := runBound(t, tt.command, tt.value)
		if got != tt.want {
			t.Errorf("%q with %q: bash printed %q, want %q", tt.command, tt.value, got, tt.want)
		}
	}
}

// runBound binds value as ${{inputs.n}} and runs the command with bash in a fresh
// directory; it fails the test if bash created the canary file.
func runBound(t *testing.T, command, value string) string {
	t.Helper()
	bound, err := Bind(command, map[string]string{"inputs.n": value})
	if err != nil {
		t.Fatalf("Bind(%q, %q): %v", command, value, err)
	}
	out, canary, err := runBash(t, bound)
	if err != nil {
		t.Fatalf("bash -c %q: %v", bound, err)
	}
	if canary {
		t.Fatalf("bash -c %q created the canary", bound)
	}
	return out
}

// runBash runs script with bash in a new directory, stdin closed; canary tells whether
// a file named CANARY appeared there.
func runBash(t testing.TB, script string) (out string, canary bool, err error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash not found")
		}
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net, not a wait
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	b, err := cmd.Output()
	_, statErr := os.Stat(filepath.Join(dir, "CANARY"))
	return string(b), statErr == nil, err
}
