package binding

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A template puts ${{inputs.n}} in one shell context. Whatever the value, binding either
// refuses it or gives a command that bash runs without ever creating CANARY; in data
// contexts the program receives exactly the value.
type bindTemplate struct {
	command string
	// binds says whether binding must succeed (true), must be refused (false), or
	// either (nil: refusing is allowed, e.g. for names bash gives a meaning to).
	binds func(v string) *bool
	// want is what bash must print when the value was bound (nil: not checked).
	want func(v string) string
}

var (
	always    = dataValue
	never     = func(string) *bool { return ptr(false) }
	integer   = func(v string) *bool { return ptr(integerLit.MatchString(v)) }
	name      = nameOnly
	exact     = func(v string) string { return v }
	heredoc   = func(v string) *bool { return ptr(!strings.ContainsAny(v, "\n\r") && v != "EOF") }
	notOption = func(v string) *bool { return orStartup(v, !strings.HasPrefix(v, "-")) }
)

func ptr(b bool) *bool { return &b }

// dataValue: a value in data binds, unless it spells NAME=... for a variable whose value is
// code (env, sudo or make would put such an argument in an environment): then either.
func dataValue(v string) *bool {
	if spellsStartup(v) {
		return nil
	}
	return ptr(true)
}

// spellsStartup reports whether v holds NAME= for a start-up variable NAME.
func spellsStartup(v string) bool {
	parts := strings.Split(v, "=")
	for _, p := range parts[:len(parts)-1] {
		if StartupVar(p) != "" {
			return true
		}
	}
	return false
}

// orStartup is binds for an argument: a value that spells NAME=... for a start-up variable
// is refused, others bind when ok.
func orStartup(v string, ok bool) *bool {
	if spellsStartup(v) {
		return ptr(false)
	}
	return ptr(ok)
}

// startupName: a name that makes a start-up variable is refused, other identifiers may bind.
func startupName(prefix string) func(string) *bool {
	return func(v string) *bool {
		if StartupVar(prefix+v) != "" {
			return ptr(false)
		}
		return nameOnly(v)
	}
}

// nameOnly: a non-identifier is refused; an identifier may be refused too (OPTIND, PS4).
func nameOnly(v string) *bool {
	if envVarName.MatchString(v) {
		return nil
	}
	return ptr(false)
}

var bindTemplates = []bindTemplate{
	// data: quoted for where it lands, received intact
	{command: `printf '%s' ${{inputs.n}}`, binds: always, want: exact},
	{command: `printf '%s' "${{inputs.n}}"`, binds: always, want: exact},
	{command: `printf '%s' '${{inputs.n}}'`, binds: always, want: exact},
	{command: `printf '%s' $'${{inputs.n}}'`, binds: always, want: exact},
	{command: `printf '%s' "a ${{inputs.n}} b"`, binds: always, want: func(v string) string { return "a " + v + " b" }},
	{command: `printf '%s' pre${{inputs.n}}post`, binds: always, want: func(v string) string { return "pre" + v + "post" }},
	{command: `printf '%s' {a,${{inputs.n}}}`, binds: always, want: func(v string) string { return "a" + v }},
	{command: `x=${{inputs.n}}; printf '%s' "$x"`, binds: always, want: exact},
	{command: `export X=${{inputs.n}}; printf '%s' "$X"`, binds: always, want: exact},
	{command: `f() { local x=${{inputs.n}}; printf '%s' "$x"; }; f`, binds: always, want: exact},
	{command: `declare x=${{inputs.n}}; printf '%s' "$x"`, binds: func(v string) *bool { return ptr(!strings.HasPrefix(v, "(")) }, want: exact},
	{command: `a=(${{inputs.n}} z); printf '%s' "${a[0]}"`, binds: always, want: exact},
	{command: `for x in ${{inputs.n}}; do printf '%s' "$x"; done`, binds: always, want: exact},
	{command: `[[ ${{inputs.n}} == ${{inputs.n}} ]] && printf ok`, binds: always, want: func(string) string { return "ok" }},
	{command: `test ${{inputs.n}} = ${{inputs.n}} && printf ok`, binds: func(v string) *bool { return orStartup(v, v != "-v") }, want: func(string) string { return "ok" }},
	{command: "cat <<EOF\n${{inputs.n}}\nEOF", binds: heredoc, want: func(v string) string { return v + "\n" }},
	{command: "cat <<'EOF'\n${{inputs.n}}\nEOF", binds: heredoc, want: func(v string) string { return v + "\n" }},
	{command: `cat <<< ${{inputs.n}}`, binds: always, want: func(v string) string { return v + "\n" }},
	{command: `printf '%s' "$(printf '%s' ${{inputs.n}})"`, binds: always, want: func(v string) string { return strings.TrimRight(v, "\n") }},
	{command: `bash -c 'printf %s "$1"' _ ${{inputs.n}}`, binds: always, want: exact},
	{command: "printf '%s' ${{inputs.n}} # ${{inputs.n}}", binds: always, want: exact},
	{command: "printf '%s' $[[${{inputs.n}}]]", binds: always, want: exact},
	// arithmetic: integers only
	{command: "echo $(( ${{inputs.n}} + 1 ))", binds: integer},
	{command: "(( ${{inputs.n}} + 1 )); :", binds: integer},
	{command: `echo "$(( "${{inputs.n}}" ))"`, binds: integer},
	{command: "echo $(( $(printf %s ${{inputs.n}}) ))", binds: integer},
	{command: "echo $[ ${{inputs.n}} ]", binds: integer},
	{command: `let "x=${{inputs.n}}"`, binds: integer},
	{command: "let x=${{inputs.n}}", binds: integer},
	{command: "declare -i x=${{inputs.n}}", binds: integer},
	{command: "builtin local -i x=${{inputs.n}} 2>/dev/null; :", binds: integer},
	{command: "declare -i x; x=${{inputs.n}}", binds: integer},
	{command: "declare -i x; for x in ${{inputs.n}}; do :; done", binds: integer},
	{command: "RANDOM=${{inputs.n}}", binds: integer},
	{command: "a=1; [[ $a -eq ${{inputs.n}} ]]; :", binds: integer},
	{command: "a[${{inputs.n}}]=1", binds: integer},
	{command: "a=([${{inputs.n}}]=1)", binds: integer},
	{command: "for (( i=${{inputs.n}}; 0; )); do :; done", binds: integer},
	{command: "a=(1 2); echo ${a[${{inputs.n}}]} 2>/dev/null; :", binds: integer},
	{command: `x=abc; echo "${x:${{inputs.n}}:1}" 2>/dev/null; :`, binds: integer},
	{command: "echo $(( 1 -${{inputs.n}} ))", binds: integer},
	// variable names: identifiers only
	{command: "[[ -v ${{inputs.n}} ]]; :", binds: name},
	{command: "test -v ${{inputs.n}}; :", binds: name},
	{command: "[ -v ${{inputs.n}} ]; :", binds: name},
	{command: "printf -v ${{inputs.n}} %s x", binds: name},
	{command: "read ${{inputs.n}} <<< x", binds: name},
	{command: "read -r -a ${{inputs.n}} <<< x", binds: name},
	{command: "a=(1); unset ${{inputs.n}}", binds: name},
	{command: "declare ${{inputs.n}}=1", binds: name},
	{command: `declare "${{inputs.n}}=1"`, binds: name},
	{command: "f() { local ${{inputs.n}}=1; }; f", binds: name},
	{command: `declare -n r=${{inputs.n}}; : "$r"`, binds: name},
	{command: "for ${{inputs.n}} in a; do :; done", binds: name},
	{command: "getopts a ${{inputs.n}}", binds: name},
	{command: "${{inputs.n}}=1", binds: name},
	// code: refused
	{command: "eval ${{inputs.n}}", binds: never},
	{command: `eval "echo ${{inputs.n}}"`, binds: never},
	{command: "trap ${{inputs.n}} EXIT", binds: never},
	{command: `trap "echo ${{inputs.n}}" EXIT`, binds: never},
	{command: "builtin eval ${{inputs.n}}", binds: never},
	{command: "command eval ${{inputs.n}}", binds: never},
	{command: "bash -c ${{inputs.n}}", binds: never},
	{command: `sh -ec "echo ${{inputs.n}}"`, binds: never},
	{command: "bash <<EOF\n${{inputs.n}}\nEOF", binds: never},
	{command: "echo ${{inputs.n}} | bash", binds: never},
	{command: "source <(echo ${{inputs.n}})", binds: never},
	{command: "mapfile -C ${{inputs.n}} -c 1 a <<< x", binds: never},
	{command: "compgen -W ${{inputs.n}}", binds: never},
	{command: "PS4=${{inputs.n}}; set -x; :", binds: never},
	{command: `declare -a arr="(${{inputs.n}})"`, binds: never},
	// a value that would turn the next (quoted, inert) argument into code or a name
	{command: "printf ${{inputs.n}} 'a[$(touch CANARY)]' x", binds: notOption},
	{command: "bash ${{inputs.n}} 'touch CANARY' 2>/dev/null", binds: notOption},
	{command: "[ ${{inputs.n}} 'a[$(touch CANARY)]' ] 2>/dev/null; :", binds: func(v string) *bool { return orStartup(v, v != "-v") }},
	{command: "declare -a arr=${{inputs.n}}", binds: func(v string) *bool { return ptr(!strings.HasPrefix(v, "(")) }},
	// variables a program runs, or loads code from, when it starts (issue 27): a child bash
	// started after the assignment is where BASH_ENV, exported functions and SHELLOPTS act
	{command: "BASH_ENV=${{inputs.n}} bash -c :", binds: never},
	{command: "BASH_ENV=/tmp/${{inputs.n}} bash -c :", binds: never},
	{command: `BASH_ENV="${{inputs.n}}" bash -c :`, binds: never},
	{command: "BASH_ENV+=${{inputs.n}} bash -c :", binds: never},
	{command: "export BASH_ENV=${{inputs.n}}; bash -c :", binds: never},
	{command: "declare -x BASH_ENV=${{inputs.n}}; bash -c :", binds: never},
	{command: `declare -x "BASH_ENV=${{inputs.n}}"; bash -c :`, binds: never},
	{command: "typeset -x BASH_ENV=${{inputs.n}}; bash -c :", binds: never},
	{command: "builtin export BASH_ENV=${{inputs.n}}; bash -c :", binds: never},
	{command: "readonly BASH_ENV=${{inputs.n}}; export BASH_ENV; bash -c :", binds: never},
	{command: "f() { local -x BASH_ENV=${{inputs.n}}; bash -c :; }; f", binds: never},
	{command: "set -a; BASH_ENV=${{inputs.n}}; bash -c :", binds: never},
	{command: "env BASH_ENV=${{inputs.n}} bash -c :", binds: never},
	{command: "/usr/bin/env -i BASH_ENV=${{inputs.n}} bash -c :", binds: never},
	{command: "exec env X=1 BASH_ENV=${{inputs.n}} bash -c :", binds: never},
	{command: "nohup env BASH_ENV=${{inputs.n}} bash -c : 2>/dev/null", binds: never},
	{command: "env ${{inputs.n}} bash -c : 2>/dev/null; :", binds: func(v string) *bool {
		if strings.HasPrefix(v, "-") || spellsStartup(v) {
			return ptr(false)
		}
		return nil // a value naming the program env runs is the command's business
	}},
	{command: "env -S ${{inputs.n}} 2>/dev/null; :", binds: never},
	{command: "env X=${{inputs.n}} bash -c 'printf %s \"$X\"'", binds: always, want: exact},
	{command: "env 'BASH_FUNC_x%%=${{inputs.n}}' bash -c x 2>/dev/null; :", binds: never},
	{command: "ENV=${{inputs.n}} sh -i </dev/null >/dev/null 2>&1", binds: never},
	{command: "SHELLOPTS=${{inputs.n}} bash -c : 2>/dev/null; :", binds: never},
	{command: "PROMPT_COMMAND=${{inputs.n}} bash -i </dev/null >/dev/null 2>&1", binds: never},
	{command: "IFS=${{inputs.n}} read -r a <<< x", binds: never},
	{command: "LD_PRELOAD=${{inputs.n}} true 2>/dev/null", binds: never},
	{command: "PYTHONPATH=${{inputs.n}} true", binds: never},
	{command: "printf -v BASH_ENV %s ${{inputs.n}}; export BASH_ENV; bash -c :", binds: never},
	{command: "read -r BASH_ENV <<< ${{inputs.n}}; export BASH_ENV; bash -c :", binds: never},
	{command: "for BASH_ENV in ${{inputs.n}}; do export BASH_ENV; bash -c :; done", binds: never},
	{command: "export ${{inputs.n}}='$(touch CANARY)'; bash -c :", binds: startupName("")},
	{command: "export BASH_${{inputs.n}}='$(touch CANARY)'; bash -c :", binds: startupName("BASH_")},
	{command: "${{inputs.n}}='$(touch CANARY)'; export BASH_ENV; bash -c :", binds: startupName("")},
	{command: "read -r ${{inputs.n}} <<< '$(touch CANARY)'; export BASH_ENV; bash -c :", binds: startupName("")},
	{command: "printf -v ${{inputs.n}} %s '$(touch CANARY)'; export BASH_ENV; bash -c :", binds: startupName("")},
}

// canaryFragments build values that would run `touch CANARY` if bash evaluated them.
var canaryFragments = []string{
	"$(touch CANARY)", "`touch CANARY`", "touch CANARY", "a[", "]", "'", `"`, ";", "\n", `\`, "${",
	"$((", "))", "}", "(", ")", "a", "1", "-", "-v", "-c", "-C", " ", "EOF", "=", "{", ",", "~",
	"*", "$", "#", "PS4", "x", "!", "|", "&", "<", ">", "\t", "%s", "..", "$'", "<<", "0",
	"BASH_ENV", "ENV", "BASH_", "LD_PRELOAD", "-S ", "() { touch CANARY; }", "%%",
}

// fataler is what checkTemplate needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkTemplate binds value into tpl and runs the result with bash (in a directory of tb's).
func checkTemplate(t fataler, tb testing.TB, tpl bindTemplate, value string) {
	t.Helper()
	bound, err := Bind(tpl.command, map[string]string{"inputs.n": value})
	if want := tpl.binds(value); want != nil && *want != (err == nil) {
		t.Fatalf("Bind(%q, %q): got error %v, want binds=%v", tpl.command, value, err, *want)
	}
	if err != nil {
		return
	}
	out, canary, runErr := runBash(tb, bound)
	if canary {
		t.Fatalf("value %q ran as code: bash -c %q created CANARY", value, bound)
	}
	if tpl.want == nil {
		return
	}
	if runErr != nil {
		t.Fatalf("bash -c %q: %v", bound, runErr)
	}
	if want := tpl.want(value); out != want {
		t.Fatalf("%q with %q: bash printed %q, want %q (bound: %q)", tpl.command, value, out, want, bound)
	}
}

func TestBindNeverRunsValuesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tpl := rapid.SampledFrom(bindTemplates).Draw(rt, "template")
		value := rapid.OneOf(
			rapid.Map(rapid.SliceOfN(rapid.SampledFrom(canaryFragments), 0, 6), func(p []string) string { return strings.Join(p, "") }),
			rapid.StringMatching(`[+-]?[0-9]{1,3}`),
			rapid.StringMatching(`[A-Za-z_][A-Za-z0-9_]{0,6}`),
			rapid.String(),
		).Filter(func(v string) bool { return !strings.ContainsRune(v, 0) }).Draw(rt, "value")
		checkTemplate(rt, t, tpl, value)
	})
}

// FuzzBindNeverRuns: for any value, every template either refuses it or runs without
// the value running as code (and data arrives intact).
func FuzzBindNeverRuns(f *testing.F) {
	for _, v := range []string{"", evil, "$(touch CANARY)", "`touch CANARY`", "-v", "-c", "42", "-7", "name",
		"EOF", "a\nb", "it's", `\`, "(x)", "done", "OPTIND",
		// start-up variables (issue 27), one seed per form: a name, NAME=code, env's -S, a function
		"BASH_ENV", "ENV", "PS4", "SHELLOPTS", "LD_PRELOAD", "BASH_ENV=$(touch CANARY)", "LD_PRELOAD=/tmp/x.so",
		"-S touch CANARY", "--split-string=touch CANARY", "() { touch CANARY; }", "xtrace", "BASH_FUNC_x%%=() { touch CANARY; }"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value string) {
		if strings.ContainsRune(value, 0) {
			if _, err := Bind(bindTemplates[0].command, map[string]string{"inputs.n": value}); err == nil {
				t.Fatal("a NUL byte was bound")
			}
			return
		}
		for _, tpl := range bindTemplates {
			checkTemplate(t, t, tpl, value)
		}
	})
}
