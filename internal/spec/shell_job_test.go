package spec

import "testing"

// A value bash would evaluate is refused when the job file is read (before anything is
// sent), with the file, the field and the value; typed inputs are numbers before that.
func TestParseJobRefusesEvaluatedValues(t *testing.T) {
	arith := "command: echo $(( ${{inputs.n}} + 1 ))\ninputs:\n"
	tests := []struct {
		name, yml, set, want string
	}{
		{"string input", arith + "  n: 'a[$(touch /tmp/x)]'\n", "",
			`job.yml: command: ${{inputs.n}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "a[$(touch /tmp/x)]" (line 1)`},
		{"string input from --set", arith + "  n: '1'\n", "inputs.n=a[$(touch /tmp/x)]",
			`job.yml: command: ${{inputs.n}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "a[$(touch /tmp/x)]" (line 1)`},
		{"number input", arith + "  n: 0.5\n", "",
			`job.yml: command: ${{inputs.n}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "0.5" (line 1)`},
		{"integer input from --set", arith + "  n: 1\n", "inputs.n=a[$(touch /tmp/x)]",
			`job.yml: inputs.n: expected integer, got "a[$(touch /tmp/x)]" (from --set)`},
		{"typed integer input", arith + "  n: {type: integer, value: 'a[$(touch /tmp/x)]'}\n", "",
			`job.yml: inputs.n.value: expected integer, got "a[$(touch /tmp/x)]" (line 3)`},
		{"typed integer input from --set", arith + "  n: {type: integer, value: 1}\n", "inputs.n=a[$(touch /tmp/x)]",
			`job.yml: inputs.n.value: expected integer, got "a[$(touch /tmp/x)]" (from --set)`},
		{"typed number input from --set", arith + "  n: {type: number, default: 1}\n", "inputs.n=$(touch /tmp/x)",
			`job.yml: inputs.n.value: expected number, got "$(touch /tmp/x)" (from --set)`},
		{"data input", "command: echo $(( ${{inputs.d}} ))\ninputs:\n  d: {type: uri_folder, path: ./data}\n", "",
			`job.yml: command: ${{inputs.d}} is used in bash arithmetic ($(( ))), so its value must be an integer; got "<path of inputs.d>" (line 1)`},
		{"name", "command: read ${{inputs.v}} <<< x\ninputs:\n  v: a b\n", "",
			`job.yml: command: ${{inputs.v}} is used as a variable name (read), so its value must be a name of letters, digits and _ not starting with a digit; got "a b" (line 1)`},
		{"code", "command: |\n  echo hi\n  eval \"${{inputs.v}}\"\ninputs:\n  v: ls\n", "",
			`job.yml: command: ${{inputs.v}} is in text that bash runs as code (eval), so no value is safe there; assign it to a variable first (v=${{inputs.v}}) and use "$v" inside that code (line 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sets []string
			if tt.set != "" {
				sets = append(sets, tt.set)
			}
			_, _, _, err := parseJob(t, tt.yml, map[string]string{"data/x": "1"}, sets...)
			checkErr(t, err, tt.want)
		})
	}
}

// Values that bash only reads as data, and integers in arithmetic, are accepted.
func TestParseJobAcceptsDataAndIntegers(t *testing.T) {
	for _, yml := range []string{
		"command: python3 train.py --lr ${{inputs.lr}} --data ${{inputs.d}} --out ${{outputs.m}}\ninputs:\n  lr: 0.01\n  d: {type: uri_folder, path: ./data}\noutputs:\n  m:\n",
		"command: echo $(( ${{inputs.n}} + 1 ))\ninputs:\n  n: 41\n",
		"command: echo $(( ${{inputs.n}} + 1 ))\ninputs:\n  n: {type: integer, default: -2}\n",
		"command: echo $[[$(( ${{inputs.n}} ))]] done\ninputs:\n  n: {type: string, optional: true}\n",
		"command: bash -c 'echo \"$1\"' _ ${{inputs.s}}\ninputs:\n  s: 'a[$(touch /tmp/x)]'\n",
	} {
		if _, _, _, err := parseJob(t, yml, map[string]string{"data/x": "1"}); err != nil {
			t.Errorf("%s: %v", yml, err)
		}
	}
}
