package spec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
)

func TestInstanceDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, yml, want string }{
		{"bad cron", "name: ci1\ntype: instance\nschedules:\n  compute_start_stop:\n    - action: stop\n      trigger: {type: cron, expression: \"0 25 * * *\"}\n",
			`compute.yml: schedules.compute_start_stop[0].trigger: hour field "25": 25 is out of range 0-23 (line 6)`},
		{"unknown zone", "name: ci1\ntype: instance\nschedules:\n  compute_start_stop:\n    - action: start\n      trigger: {type: cron, expression: \"0 8 * * *\", time_zone: Mars Standard Time}\n",
			`compute.yml: schedules.compute_start_stop[0].trigger: unknown time zone "Mars Standard Time"`},
		{"action required", "name: ci1\ntype: instance\nschedules:\n  compute_start_stop:\n    - trigger: {type: cron, expression: \"0 8 * * *\"}\n",
			`compute.yml: schedules.compute_start_stop[0].action: required`},
		{"bad action", "name: ci1\ntype: instance\nschedules:\n  compute_start_stop:\n    - action: reboot\n      trigger: {type: cron, expression: \"0 8 * * *\"}\n",
			`schedules.compute_start_stop[0].action`},
		{"recurrence interval", "name: ci1\ntype: instance\nschedules:\n  compute_start_stop:\n    - action: stop\n      trigger: {type: recurrence, frequency: day, interval: 2, schedule: {hours: [18]}}\n",
			`schedules.compute_start_stop[0].trigger: interval 2 with frequency day`},
		{"bad week day", "name: ci1\ntype: instance\nschedules:\n  compute_start_stop:\n    - action: stop\n      trigger: {type: recurrence, frequency: week, schedule: {week_days: [funday]}}\n",
			`schedules.compute_start_stop[0].trigger.schedule.week_days[0]: expected a week day`},
		{"script missing", "name: ci1\ntype: instance\nsetup_scripts:\n  startup_script: {path: nope.sh}\n",
			`compute.yml: setup_scripts.startup_script.path:`},
		{"script path required", "name: ci1\ntype: instance\nsetup_scripts:\n  startup_script: {timeout_minutes: 3}\n",
			`setup_scripts.startup_script.path: required`},
		{"arguments expanded", "name: ci1\ntype: instance\nsetup_scripts:\n  creation_script: {path: scripts/create.sh, command: \"$(reboot)\"}\n",
			`setup_scripts.creation_script.command: "$(reboot)": arguments are passed as words`},
		{"arguments with a semicolon", "name: ci1\ntype: instance\nsetup_scripts:\n  creation_script: {path: scripts/create.sh, script_arguments: \"a; rm -rf /\"}\n",
			`setup_scripts.creation_script.script_arguments: "a; rm -rf /": ; is not allowed`},
		{"provider", "name: ci1\ntype: instance\nprovider: {type: command, create: x}\n",
			`provider.delete: required`},
	} {
		_, _, _, err := parseComputeT(t, tc.yml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestInstanceDecodeRecurrenceAndScripts(t *testing.T) {
	s, _, _, err := parseComputeT(t, `name: dev1
type: computeinstance
size: local-quarter
provider: local
schedules:
  compute_start_stop:
    - action: start
      state: disabled
      trigger:
        type: recurrence
        frequency: week
        interval: 1
        time_zone: Pacific Standard Time
        schedule: {hours: [8], minutes: [30], week_days: [Monday, friday]}
    - action: stop
      trigger: {type: recurrence, frequency: hour, interval: 4, schedule: {minutes: 15}}
setup_scripts:
  startup_script: {script_source_path: scripts/create.sh, script_arguments: "one 'two words' three\\ four", timeout: PT90S}
`)
	if err != nil {
		t.Fatal(err)
	}
	var crons []string
	for _, st := range s.Instance.Schedules.ComputeStartStop {
		crons = append(crons, st.Action+" "+st.State+" "+st.Cron)
	}
	want := []string{"start disabled 30 8 * * 1,5", "stop enabled 15 */4 * * *"}
	if diff := cmp.Diff(want, crons); diff != "" {
		t.Errorf("schedules (-want +got):\n%s", diff)
	}
	got := s.Instance.SetupScripts.StartupScript
	wantScript := &compute.SetupScript{Path: "scripts/create.sh", Args: []string{"one", "two words", "three four"}, TimeoutMinutes: 2, Content: "#!/bin/sh\n"}
	if diff := cmp.Diff(wantScript, got); diff != "" {
		t.Errorf("startup script (-want +got):\n%s", diff)
	}
}
