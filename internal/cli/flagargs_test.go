package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  string
		want  string
		notes []string
		err   string
	}{
		{"whole names unchanged", "online-deployment show --name d --endpoint-name e -o tsv",
			"online-deployment show --name d --endpoint-name e -o tsv", nil, ""},
		{"prefix of a long flag", "online-deployment show --name d --endpoint e",
			"online-deployment show --name d --endpoint-name e", nil, ""},
		{"prefix with =", "online-deployment update -n d --endpoint=e --set instance_count=2",
			"online-deployment update -n d --endpoint-name=e --set instance_count=2", nil, ""},
		{"--f is --file", "batch-endpoint create --f ep.yml", "batch-endpoint create --file ep.yml", nil, ""},
		{"--out is --output (inherited)", "compute show -n c --out tsv --que status", "compute show -n c --output tsv --query status", nil, ""},
		{"--deployment is --deployment-name", "online-endpoint invoke -n e --deployment blue -r r.json",
			"online-endpoint invoke -n e --deployment-name blue -r r.json", nil, ""},
		{"a value that looks like a flag is a value", "job create -f j.yml --set command=--endpoint",
			"job create -f j.yml --set command=--endpoint", nil, ""},
		{"value of a short flag is not read as a flag", "job create -f --na", "job create -f --na", nil, ""},
		{"several --set words", "online-deployment update -n d -e ep --set instance_count=2 description=x --no-wait",
			"online-deployment update -n d -e ep --set instance_count=2 --set description=x --no-wait", nil, ""},
		{"--set words end at a word without =", "job create -f j.yml --set a=1 b=2 --name n",
			"job create -f j.yml --set a=1 --set b=2 --name n", nil, ""},
		{"az scope flags dropped with a note", "job create -f j.yml --resource-group rg --workspace-name ws --subscription s",
			"job create -f j.yml", []string{
				"note: --resource-group is az's: a Hangar workspace is the server at --workspace or $HANGAR_URL; Azure's resource group is ignored",
				"note: --workspace-name is az's: a Hangar workspace is the server at --workspace or $HANGAR_URL; Azure's workspace name is ignored",
				"note: --subscription is az's: a Hangar workspace has no Azure subscription; ignored"}, ""},
		{"short az flags", "compute list-sizes -g rg -w ws", "compute list-sizes", []string{
			"note: -g is az's: a Hangar workspace is the server at --workspace or $HANGAR_URL; Azure's resource group is ignored",
			"note: -w is az's: a Hangar workspace is the server at --workspace or $HANGAR_URL; Azure's workspace name is ignored"}, ""},
		{"--workspace is still hangar's", "job list --workspace http://h:1", "job list --workspace http://h:1", nil, ""},
		{"boolean az flag", "job create -f j.yml --web", "job create -f j.yml", []string{"note: --web is az's: ignored: `hangar studio` prints a link to the web studio"}, ""},
		{"-r of a command that has -r is its own", "online-endpoint invoke -n e -r req.json", "online-endpoint invoke -n e -r req.json", nil, ""},
		{"--registry-name refused", "model show -n m --registry-name azureml", "", nil,
			"--registry-name azureml: Azure ML registries are not part of a Hangar workspace"},
		{"-r refused where it is not the command's", "model show -n m -r azureml", "", nil, "-r azureml: Azure ML registries"},
		{"ambiguous prefix", "online-deployment create --s x", "", nil,
			"hangar online-deployment create: --s is ambiguous: it may be --set, --spec-root"},
		{"unknown flag left to cobra", "job list --bogus", "job list --bogus", nil, ""},
		{"after -- nothing is read", "job create -f j.yml -- --na", "job create -f j.yml -- --na", nil, ""},
		{"unknown command left to cobra", "frobnicate --na x", "frobnicate --na x", nil, ""},
		{"completion untouched", "__complete job show --na", "__complete job show --na", nil, ""},
		{"a persistent flag before the command", "-o json job list --lim 5", "-o json job list --limit 5", nil, ""},
		{"a short flag with its value attached", "job list -ojson --stat Failed", "job list -ojson --status Failed", nil, ""},
		{"a boolean takes no value", "job cancel --ye myjob", "job cancel --yes myjob", nil, ""},
		{"a short boolean takes no value", "compute delete -y gpu-box", "compute delete -y gpu-box", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normalizeFlags(NewRoot(Deps{}), strings.Fields(tt.args))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.Fields(tt.want), got.args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.notes, got.notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAzEntry(t *testing.T) {
	tests := []struct {
		argv    string
		isAz    bool
		args    string // hangar's, when it runs
		handled bool
		code    int
		note    string
	}{
		{"hangar job list", false, "", false, 0, ""},
		{"/usr/local/bin/az ml job show -n x", true, "job show -n x", false, 0, ""},
		{"hangar az ml compute create -n c --type amlcompute", true, "compute create -n c --type amlcompute", false, 0, ""},
		{"az ml", true, "", false, 0, ""},
		{"az version", true, "version", false, 0, ""},
		{"az login --identity", true, "", true, ExitOK, "note: az login does nothing here"},
		{"az account set -s 0000", true, "", true, ExitOK, "note: az account set does nothing here: a Hangar workspace has no Azure subscription"},
		{"az configure --defaults group=g workspace=w", true, "", true, ExitOK, "note: az configure does nothing here"},
		{"az extension add -n ml -y", true, "", true, ExitOK, "note: az extension add does nothing here"},
		{"az storage blob upload -f x", true, "", true, ExitUsage, "Error: az storage is not Azure ML's CLI"},
		{"az", true, "", true, ExitUsage, "`az ml <verb> ...` runs `hangar <verb> ...`"},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			got, isAz := azEntry(strings.Fields(tt.argv))
			if isAz != tt.isAz || got.handled != tt.handled || got.code != tt.code {
				t.Fatalf("azEntry = %+v, %v; want az %v, handled %v, code %d", got, isAz, tt.isAz, tt.handled, tt.code)
			}
			if !tt.handled && tt.isAz && strings.Join(got.args, " ") != tt.args {
				t.Errorf("args %q, want %q", got.args, tt.args)
			}
			if !strings.Contains(got.note, tt.note) {
				t.Errorf("note %q, want it to contain %q", got.note, tt.note)
			}
		})
	}
}

// TestRunAsAz runs whole command lines through Run's reading of argv: az's are refused or
// answered as hangar's, and what goes to stderr says so.
func TestRunAsAz(t *testing.T) {
	tests := []struct {
		argv   string
		code   int
		stdout string
		stderr string
	}{
		{"az version", ExitOK, "hangar " + Version + "\n", ""},
		{"az ml version --resource-group rg", ExitOK, "hangar " + Version + "\n", "note: --resource-group is az's"},
		{"az account set --subscription x", ExitOK, "", "note: az account set does nothing here"},
		{"az vm list", ExitUsage, "", "Error: az vm is not Azure ML's CLI"},
		{"az ml frobnicate", ExitUsage, "", `unknown command "frobnicate" for "hangar"`},
		{"hangar online-deployment create --s x", ExitUsage, "", "Error: hangar online-deployment create: --s is ambiguous: it may be --set, --spec-root"},
	}
	for _, tt := range tests {
		t.Run(tt.argv, func(t *testing.T) {
			t.Setenv("HANGAR_HOME", t.TempDir())
			t.Setenv("HANGAR_URL", "http://127.0.0.1:1")
			var stdout, stderr bytes.Buffer
			root := newRoot(&Env{Stdout: &stdout, Stderr: &stderr})
			code := runArgv(t.Context(), root, strings.Fields(tt.argv), &stderr)
			if code != tt.code || stdout.String() != tt.stdout || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, stderr containing %q", code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}
