package cli

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestAzExamplesCoverage measures how many of the `az ml` command lines in a tree of shell
// scripts (Azure ML's CLI examples: azureml-examples/cli) Hangar's CLI accepts as it would run
// them: the command exists and every flag parses (aliases, prefixes and az's ignored flags as
// Run reads them), without running anything. It needs the scripts, which are not part of this
// repository:
//
//	go test ./internal/cli -run TestAzExamplesCoverage -azexamples /path/to/azureml-examples/cli -v
//
// docs/az.md records what it measured.
var azExamples = flag.String("azexamples", "", "folder of shell scripts whose az ml lines TestAzExamplesCoverage parses")

func TestAzExamplesCoverage(t *testing.T) {
	if *azExamples == "" {
		t.Skip("a measurement: give -azexamples DIR (Azure ML's example scripts) to run it")
	}
	var lines []azLine
	scripts := 0
	err := filepath.WalkDir(*azExamples, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sh") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scripts++
		rel, _ := filepath.Rel(*azExamples, path)
		lines = append(lines, azLines(rel, string(b))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	byVerb := map[string][2]int{}
	failed := map[string]int{}
	badScripts := map[string]bool{}
	otherThanRegistry := map[string]bool{} // scripts refused for more than --registry-name
	ok := 0
	for _, l := range lines {
		verb, why := parseAzLine(l.words)
		n := byVerb[verb]
		n[1]++
		if why == "" {
			n[0]++
			ok++
		} else {
			failed[verb+": "+why]++
			badScripts[l.file] = true
			if !strings.Contains(why, "--registry-name") {
				otherThanRegistry[l.file] = true
			}
		}
		byVerb[verb] = n
	}
	t.Logf("%d scripts, %d az ml command lines: %d accepted (%.0f%%); %d scripts whose every az ml line is accepted",
		scripts, len(lines), ok, 100*float64(ok)/float64(max(len(lines), 1)), scripts-len(badScripts))
	t.Logf("%d scripts have a refused line; %d of them only lines with --registry-name (Azure's registries)",
		len(badScripts), len(badScripts)-len(otherThanRegistry))
	verbs := make([]string, 0, len(byVerb))
	for v := range byVerb {
		verbs = append(verbs, v)
	}
	sort.Slice(verbs, func(i, j int) bool { return byVerb[verbs[i]][1] > byVerb[verbs[j]][1] })
	for _, v := range verbs {
		t.Logf("  %-36s %4d of %4d", v, byVerb[v][0], byVerb[v][1])
	}
	reasons := make([]string, 0, len(failed))
	for r := range failed {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return failed[reasons[i]] > failed[reasons[j]] })
	t.Log("refused:")
	for _, r := range reasons {
		t.Logf("  %4d  %s", failed[r], r)
	}
}

// azLine is one az ml command line of a script, as words.
type azLine struct {
	file  string
	words []string // after "az"
}

var (
	shellAssign = regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	shellVar    = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
)

// azLines finds the az ml command lines of a script: continuation lines joined, comments left
// out, each ending where the shell's command would ($(...)'s ")", a pipe, ;, &&, ||, a
// redirection). A variable is its value where the script assigns it flags (workspace_info=
// "--resource-group ..."), else a placeholder word.
func azLines(file, script string) []azLine {
	text := strings.ReplaceAll(script, "\\\n", " ")
	flagVars := map[string]string{}
	var out []azLine
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if m := shellAssign.FindStringSubmatch(line); m != nil {
			if v := strings.Trim(m[2], `"'`); strings.HasPrefix(v, "--") {
				flagVars[m[1]] = v
			}
		}
		for rest := line; ; {
			i := strings.Index(rest, "az ml ")
			if i < 0 {
				break
			}
			words, n := shellWords(rest[i+3:], flagVars)
			out = append(out, azLine{file: file, words: words})
			rest = rest[i+3+n:]
		}
	}
	return out
}

// shellWords splits s into the words of one command, up to where the command ends, and says
// how much of s it read.
func shellWords(s string, flagVars map[string]string) ([]string, int) {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	flush := func() {
		if inWord {
			w := cur.String()
			if m := shellVar.FindStringSubmatch(w); m != nil && m[0] == w && flagVars[m[1]] != "" {
				words = append(words, strings.Fields(flagVars[m[1]])...)
			} else {
				words = append(words, shellVar.ReplaceAllString(w, "X"))
			}
		}
		cur.Reset()
		inWord = false
	}
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte(")`|;&<>", c) >= 0:
			if w := cur.String(); (c == '>' || c == '<') && w != "" && strings.Trim(w, "0123456789") == "" {
				inWord = false // 2>&1: the descriptor of a redirection
			}
			flush()
			return words, i
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, i
}

// parseAzLine says which hangar verb an az command line is and, when Hangar would refuse it
// before running, why ("" when it parses).
func parseAzLine(words []string) (verb, why string) {
	az, _ := azEntry(append([]string{"az"}, words...))
	if az.handled {
		return "az " + words[0], az.note
	}
	root := NewRoot(Deps{})
	n, err := normalizeFlags(root, az.args)
	verb = strings.Join(azWords(az.args), " ")
	if err != nil {
		return verb, "refused: " + firstWords(err.Error())
	}
	cmd, rest, err := root.Find(n.args)
	if err != nil || cmd == root || cmd.HasSubCommands() {
		return verb, "no such command"
	}
	verb = strings.TrimPrefix(cmd.CommandPath(), "hangar ")
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return verb, firstWords(err.Error())
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return verb, firstWords(err.Error())
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return verb, firstWords(err.Error())
	}
	if o := cmd.Flags().Lookup("output"); o != nil {
		if _, err := outputFormat(o.Value.String()); err != nil {
			return verb, "output " + o.Value.String()
		}
	}
	return verb, ""
}

// firstWords keeps an error's kind and the flag it names, so that like refusals count together.
func firstWords(msg string) string {
	for _, stop := range []string{" for ", ": Azure", " in "} {
		if i := strings.Index(msg, stop); i > 0 && !slices.Contains([]string{"unknown command"}, msg[:i]) {
			msg = msg[:i]
		}
	}
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return fmt.Sprint(msg)
}
