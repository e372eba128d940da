package binding

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBind(t *testing.T) {
	tests := []struct {
		name    string
		command string
		values  map[string]string
		want    string
	}{
		{"plain", "python train.py --lr ${{inputs.lr}} --out ${{outputs.model}}", map[string]string{"inputs.lr": "0.01", "outputs.model": "/mnt/out/model"}, "python train.py --lr 0.01 --out /mnt/out/model"},
		{"spaces in braces", "echo ${{ inputs.x }}", map[string]string{"inputs.x": "a"}, "echo a"},
		{"needs quotes", "ls ${{inputs.x}}", map[string]string{"inputs.x": "my data/*.csv"}, "ls 'my data/*.csv'"},
		{"empty", "echo ${{inputs.x}} end", map[string]string{"inputs.x": ""}, "echo '' end"},
		{"single quote unquoted", "echo ${{inputs.x}}", map[string]string{"inputs.x": "it's"}, `echo 'it'\''s'`},
		{"inside double quotes", `echo "v=${{inputs.x}}"`, map[string]string{"inputs.x": "a\"b$c\\d`e"}, "echo \"v=a\\\"b\\$c\\\\d\\`e\""},
		{"inside single quotes", `echo '${{inputs.x}}'`, map[string]string{"inputs.x": "it's"}, `echo 'it'\''s'`},
		{"inside ansi quotes", `echo $'${{inputs.x}}'`, map[string]string{"inputs.x": `a'b\c`}, `echo $'a\'b\\c'`},
		{"escaped quote outside", `echo \"${{inputs.x}}`, map[string]string{"inputs.x": "a b"}, `echo \"'a b'`},
		{"escaped quote inside", `echo "a\"${{inputs.x}}"`, map[string]string{"inputs.x": "$x"}, `echo "a\"\$x"`},
		{"single quote inside double", `echo "it's ${{inputs.x}}"`, map[string]string{"inputs.x": "a b"}, `echo "it's a b"`},
		{"command substitution in double quotes", `echo "$(cat ${{inputs.x}})"`, map[string]string{"inputs.x": "a b"}, `echo "$(cat 'a b')"`},
		{"after command substitution", `echo "$(date) ${{inputs.x}}"`, map[string]string{"inputs.x": "$y"}, `echo "$(date) \$y"`},
		{"arithmetic", "echo $(( 1 << ${{inputs.x}} ))", map[string]string{"inputs.x": "3"}, "echo $(( 1 << 3 ))"},
		{"comment", "echo hi # ${{inputs.x}}", map[string]string{"inputs.x": "a\nrm -rf /"}, "echo hi # a rm -rf /"},
		{"hash inside word", "echo a#${{inputs.x}}", map[string]string{"inputs.x": "b c"}, "echo a#'b c'"},
		{"heredoc", "cat <<EOF\n${{inputs.x}}\nEOF\necho ${{inputs.x}}", map[string]string{"inputs.x": "$HOME it's"}, "cat <<EOF\n\\$HOME it's\nEOF\necho '$HOME it'\\''s'"},
		{"quoted heredoc", "cat <<'EOF'\n${{inputs.x}}\nEOF", map[string]string{"inputs.x": "$HOME"}, "cat <<'EOF'\n$HOME\nEOF"},
		{"heredoc strip tabs", "cat <<-END\n\t${{inputs.x}}\n\tEND\n", map[string]string{"inputs.x": "`x`"}, "cat <<-END\n\t\\`x\\`\n\tEND\n"},
		{"here-string", "cat <<< ${{inputs.x}}", map[string]string{"inputs.x": "a b"}, "cat <<< 'a b'"},
		{"bash test brackets", "[[ -f ${{inputs.x}} ]] && echo ok", map[string]string{"inputs.x": "f"}, "[[ -f f ]] && echo ok"},
		{"segment kept", "run $[[--lr ${{inputs.lr}}]] end", map[string]string{"inputs.lr": "0.1"}, "run --lr 0.1 end"},
		{"segment dropped", "run $[[--lr ${{inputs.lr}}]] end", map[string]string{}, "run  end"},
		{"segment dropped when one is missing", "run $[[--a ${{inputs.a}} --b ${{inputs.b}}]]", map[string]string{"inputs.a": "1"}, "run "},
		{"segment keeps quoting context", `run "$[[--x ${{inputs.x}}]]"`, map[string]string{"inputs.x": "a$b"}, `run "--x a\$b"`},
		{"other context", "echo ${{name}} ${{ctx.a}}", map[string]string{"name": "n", "ctx.a": "b"}, "echo n b"},
		{"after parameter expansion", `echo "${A:-"}"}" ${{inputs.x}}`, map[string]string{"inputs.x": "a b"}, `echo "${A:-"}"}" 'a b'`},
		{"comment after command substitution", "echo $(#${{inputs.x}}\n)", map[string]string{"inputs.x": "a\nb"}, "echo $(#a b\n)"},
		{"comment after line continuation", "echo \\\n# ${{inputs.x}}", map[string]string{"inputs.x": "a\nb"}, "echo \\\n# a b"},
		{"no references", "echo ${HOME} $[x] ]]", nil, "echo ${HOME} $[x] ]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Bind(tt.command, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestBindErrors(t *testing.T) {
	x := map[string]string{"inputs.x": "v"}
	tests := []struct {
		name, command string
		values        map[string]string
		want          string
	}{
		{"missing value", "echo ${{inputs.y}}", x, "no value for ${{inputs.y}}"},
		{"unterminated expression", "echo ${{inputs.x", x, "unterminated ${{ (missing }})"},
		{"unterminated segment", "echo $[[ ${{inputs.x}}", x, "unterminated $[[ (missing ]])"},
		{"nested segment", "echo $[[ $[[ ]] ]]", x, "nested $[[ is not allowed"},
		{"malformed", "echo ${{ }}", x, "malformed expression ${{ }}"},
		{"backquotes", "echo `echo ${{inputs.x}}`", x, "${{inputs.x}} inside backquotes is not supported; use $( ) instead"},
		{"after dollar", "echo $${{inputs.x}}", x, "${{inputs.x}} directly after $ is not supported"},
		{"after dollar in quotes", `echo "$${{inputs.x}}"`, x, "${{inputs.x}} directly after $ is not supported"},
		{"after backslash", `echo \${{inputs.x}}`, x, "${{inputs.x}} directly after a backslash is not supported"},
		{"nul in command", "echo \x00", x, "command contains a NUL byte"},
		{"nul in value", "echo ${{inputs.x}}", map[string]string{"inputs.x": "a\x00"}, "value of ${{inputs.x}} contains a NUL byte"},
		{"newline in heredoc", "cat <<EOF\n${{inputs.x}}\nEOF", map[string]string{"inputs.x": "a\nEOF"}, "value of ${{inputs.x}} contains a newline, which a here-document cannot hold"},
		{"value ends heredoc", "cat <<-EOF\n\t${{inputs.x}}\nEOF", map[string]string{"inputs.x": "EOF"}, "value of ${{inputs.x}} would end the here-document"},
		{"inside parameter expansion", `echo "${A:-${{inputs.x}}}"`, x, "${{inputs.x}} inside ${...} is not supported"},
		{"nested in heredoc", "cat <<EOF\n$(echo\n${{inputs.x}}\n)\nEOF", x, "${{inputs.x}} nested inside a here-document is not supported"},
		{"heredoc delimiter", "cat <<${{inputs.x}}\nx\n", x, "${{inputs.x}} in a here-document delimiter is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Bind(tt.command, tt.values)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReferences(t *testing.T) {
	tests := []struct {
		command string
		want    []string
	}{
		{"python t.py ${{inputs.lr}} ${{ outputs.model }} ${{inputs.lr}}", []string{"inputs.lr", "outputs.model"}},
		{"run $[[--x ${{inputs.x}}]] ${{search_space.y}}", []string{"inputs.x", "search_space.y"}},
		{"none", nil},
		{"broken ${{inputs.a}} ${{", []string{"inputs.a"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, References(tt.command)); d != "" {
			t.Errorf("mismatch (-want +got):\n%s", d)
		}
	}
}

// nastyValues must reach the program unchanged, whatever the quoting context.
var nastyValues = []string{
	"", "plain", "a b", "it's", `"double"`, "$(id)", "`id`", "$HOME", "${HOME}", "*", "?", "[a]", "~", "~root",
	`\`, `a\'b`, "-n", "!x", "%s", "{a,b}", "tab\there", "héllo", "'", "''", `\"`, "$'x'", ";echo pwned;",
	"|", "&", "#x", "a=b", "x)", "(", "EOF", "  lead", "trail  ", "a\nb", "line\n",
}

func TestBindRoundTripBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	templates := []struct {
		command      string
		pre, post    string
		noNewlines   bool
		trimTrailing bool
	}{
		{command: `printf '%s' ${{inputs.x}}`},
		{command: `printf '%s' "${{inputs.x}}"`},
		{command: `printf '%s' '${{inputs.x}}'`},
		{command: `printf '%s' pre${{inputs.x}}post`, pre: "pre", post: "post"},
		{command: `printf '%s' "a ${{inputs.x}} b"`, pre: "a ", post: " b"},
		{command: `printf '%s' $'${{inputs.x}}'`},
		{command: `printf '%s' "$(printf '%s' ${{inputs.x}})"`, trimTrailing: true},
		{command: `x=$(printf '%s' "${{inputs.x}}") && printf '%s' "$x"`, trimTrailing: true},
		{command: "printf '%s' ${{inputs.x}} # ${{inputs.x}}"},
		{command: "cat <<EOF\n${{inputs.x}}\nEOF", post: "\n", noNewlines: true},
		{command: "cat <<'EOF'\n${{inputs.x}}\nEOF", post: "\n", noNewlines: true},
		{command: "printf '%s' $[[${{inputs.x}}]]"},
		{command: "printf '%s' \"${HOME:+}${{inputs.x}}\""},
		{command: "printf '%s' $(#${{inputs.x}}\n)${{inputs.x}}"},
	}
	for _, tpl := range templates {
		for _, v := range nastyValues {
			if tpl.noNewlines && (strings.Contains(v, "\n") || v == "EOF") { // refused, see TestBindErrors
				continue
			}
			bound, err := Bind(tpl.command, map[string]string{"inputs.x": v})
			if err != nil {
				t.Errorf("Bind(%q, %q): %v", tpl.command, v, err)
				continue
			}
			out, err := exec.Command(bash, "-c", bound).Output()
			if err != nil {
				t.Errorf("bash -c %q: %v", bound, err)
				continue
			}
			want := tpl.pre + v + tpl.post
			if tpl.trimTrailing {
				want = strings.TrimRight(want, "\n")
			}
			if string(out) != want {
				t.Errorf("%q with %q: bash printed %q, want %q (bound: %q)", tpl.command, v, out, want, bound)
			}
		}
	}
}
