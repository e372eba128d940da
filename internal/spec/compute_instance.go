package spec

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/instance"
)

// maxScriptBytes bounds a setup script: its text travels with the compute and into the run
// that executes it (an environment variable, at most 128 KiB on Linux).
const maxScriptBytes = 64 << 10

// instanceFields adds the keys of `type: computeinstance`/`instance` (SPEC.md §1.2) and the
// Hangar `provider:` of its node (design 0018).
func (d *instanceDecoder) instanceFields(fs fields, s *compute.Spec) (*compute.InstanceSpec, func(map[string]*yaml.Node)) {
	in := &compute.InstanceSpec{Size: compute.DefaultSize, EnableNodePublicIP: true,
		Provider: compute.Provider{Type: compute.ProviderLocal}}
	var isoMinutes int
	fs["size"] = func(n *yaml.Node, p string) { in.Size = d.computes.size(n, p) }
	fs["idle_time_before_shutdown_minutes"] = func(n *yaml.Node, p string) {
		in.IdleTimeBeforeShutdownMinutes, _ = d.boundedInt(n, p, 15, 4320)
	}
	fs["idle_time_before_shutdown"] = func(n *yaml.Node, p string) { isoMinutes = d.isoMinutes(n, p) }
	fs["ssh_public_access_enabled"] = func(n *yaml.Node, p string) { in.SSHPublicAccessEnabled, _ = d.boolean(n, p) }
	fs["ssh_settings"] = func(n *yaml.Node, p string) { in.SSHSettings = d.computes.sshSettings(n, p, true) }
	fs["network_settings"] = func(n *yaml.Node, p string) { in.NetworkSettings = d.computes.networkSettings(n, p) }
	fs["enable_node_public_ip"] = func(n *yaml.Node, p string) { in.EnableNodePublicIP, _ = d.boolean(n, p) }
	fs["identity"] = func(n *yaml.Node, p string) { s.Identity = d.computes.computeIdentity(n, p) }
	fs["create_on_behalf_of"] = func(n *yaml.Node, p string) {
		in.CreateOnBehalfOf = map[string]string{}
		d.mapping(n, p, fields{
			"user_tenant_id": func(v *yaml.Node, p string) { in.CreateOnBehalfOf["user_tenant_id"] = d.str(v, p) },
			"user_object_id": func(v *yaml.Node, p string) { in.CreateOnBehalfOf["user_object_id"] = d.str(v, p) },
		})
	}
	fs["schedules"] = func(n *yaml.Node, p string) { in.Schedules = d.instanceSchedules(n, p) }
	fs["setup_scripts"] = func(n *yaml.Node, p string) { in.SetupScripts = d.setupScripts(n, p) }
	fs["custom_applications"] = func(n *yaml.Node, p string) {
		if n.Kind != yaml.SequenceNode {
			d.expected(n, p, "a list of applications")
			return
		}
		in.CustomApplications, _ = d.anyValue(n, p).([]any)
	}
	fs["provider"] = func(n *yaml.Node, p string) { d.computes.provider(n, p, &in.Provider) }
	return in, func(got map[string]*yaml.Node) {
		switch alias := got["idle_time_before_shutdown"]; {
		case alias != nil && got["idle_time_before_shutdown_minutes"] != nil:
			d.warnf(alias, "idle_time_before_shutdown", "ignored: idle_time_before_shutdown_minutes is set")
		case alias != nil:
			in.IdleTimeBeforeShutdownMinutes = isoMinutes
		}
		if in.SSHPublicAccessEnabled && (in.SSHSettings == nil || in.SSHSettings.SSHKeyValue == "") {
			at, path := got["ssh_settings"], "ssh_settings.ssh_key_value"
			if at == nil {
				at = got["ssh_public_access_enabled"]
			}
			d.errorf(at, path, "required when ssh_public_access_enabled is true")
		}
	}
}

// isoMinutes decodes idle_time_before_shutdown: an ISO-8601 duration from PT15M to P3D, in
// whole minutes (rounded up).
func (d *instanceDecoder) isoMinutes(n *yaml.Node, p string) int {
	secs, ok := int64(0), false
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		secs, ok = isoSecondsOK(n.Value)
	}
	switch minutes := (secs + 59) / 60; {
	case !ok:
		d.expected(n, p, "an ISO-8601 duration like PT30M")
	case minutes < 15 || minutes > 4320:
		d.errorf(n, p, "expected a duration from PT15M to P3D, got %s", quote(n.Value))
	default:
		return int(minutes)
	}
	return 0
}

// instanceSchedules decodes `schedules: {compute_start_stop: [...]}`.
func (d *instanceDecoder) instanceSchedules(n *yaml.Node, path string) *compute.Schedules {
	out := &compute.Schedules{}
	d.mapping(n, path, fields{
		"compute_start_stop": func(v *yaml.Node, p string) {
			if v.Kind != yaml.SequenceNode {
				d.expected(v, p, "a list of start and stop schedules")
				return
			}
			for i, c := range v.Content {
				if st, ok := d.startStop(resolve(c), fmt.Sprintf("%s[%d]", p, i)); ok {
					out.ComputeStartStop = append(out.ComputeStartStop, st)
				}
			}
		},
	})
	return out
}

// startStop decodes one compute_start_stop entry and checks its trigger by parsing it.
func (d *instanceDecoder) startStop(n *yaml.Node, path string) (compute.StartStopSchedule, bool) {
	st := compute.StartStopSchedule{State: "enabled"}
	var trigger *yaml.Node
	got := d.mapping(n, path, fields{
		"action":   func(v *yaml.Node, p string) { st.Action = d.enum(v, p, "start", "stop") },
		"state":    func(v *yaml.Node, p string) { st.State = d.enum(v, p, "enabled", "disabled") },
		"trigger":  func(v *yaml.Node, p string) { trigger = v; st.Trigger = d.scheduleTrigger(v, p) },
		"schedule": func(v *yaml.Node, p string) { d.warnf(v, p, "read-only field ignored") },
		"provisioning_status": func(v *yaml.Node, p string) {
			d.warnf(v, p, "read-only field ignored")
		},
		"schedule_id": func(v *yaml.Node, p string) { d.warnf(v, p, "read-only field ignored") },
	})
	if n.Kind != yaml.MappingNode {
		return st, false
	}
	for _, k := range []string{"action", "trigger"} {
		if got[k] == nil {
			d.required(n, join(path, k))
		}
	}
	if trigger == nil || st.Action == "" {
		return st, false
	}
	cron, err := triggerCron(st.Trigger)
	if err == nil {
		_, err = instance.NewSchedule(instance.Action(st.Action), cron, st.Trigger.TimeZone)
	}
	if err != nil {
		d.errorf(trigger, join(path, "trigger"), "%v", err)
		return st, false
	}
	st.Cron = cron
	return st, true
}

// scheduleTrigger decodes a trigger: {type: cron, expression, time_zone, start_time} or
// {type: recurrence, frequency, interval, schedule, time_zone, start_time}.
func (d *instanceDecoder) scheduleTrigger(n *yaml.Node, path string) compute.ScheduleTrigger {
	t := compute.ScheduleTrigger{}
	got := d.mapping(n, path, fields{
		"type":       func(v *yaml.Node, p string) { t.Type = d.enum(v, p, "cron", "recurrence") },
		"expression": func(v *yaml.Node, p string) { t.Expression = strings.TrimSpace(d.str(v, p)) },
		"start_time": func(v *yaml.Node, p string) { t.StartTime = d.str(v, p) },
		"time_zone":  func(v *yaml.Node, p string) { t.TimeZone = d.str(v, p) },
		"frequency":  func(v *yaml.Node, p string) { t.Frequency = d.enum(v, p, "minute", "hour", "day", "week", "month") },
		"interval":   func(v *yaml.Node, p string) { t.Interval, _ = d.boundedInt(v, p, 1, 1000) },
		"schedule":   func(v *yaml.Node, p string) { t.Schedule = d.recurrencePattern(v, p) },
	})
	if n.Kind != yaml.MappingNode {
		return t
	}
	need := map[string][]string{"cron": {"expression"}, "recurrence": {"frequency"}, "": {"type"}}
	for _, k := range need[t.Type] {
		if got[k] == nil {
			d.required(n, join(path, k))
		}
	}
	return t
}

// recurrencePattern decodes a recurrence's `schedule: {hours, minutes, week_days, month_days}`.
func (d *instanceDecoder) recurrencePattern(n *yaml.Node, path string) *compute.RecurrencePattern {
	rp := &compute.RecurrencePattern{}
	ints := func(lo, hi int64, dst *[]int) func(*yaml.Node, string) {
		return func(v *yaml.Node, p string) {
			if v.Kind != yaml.SequenceNode {
				v = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{v}}
			}
			for i, c := range v.Content {
				if x, ok := d.boundedInt(resolve(c), fmt.Sprintf("%s[%d]", p, i), lo, hi); ok {
					*dst = append(*dst, x)
				}
			}
		}
	}
	d.mapping(n, path, fields{
		"hours":      ints(0, 23, &rp.Hours),
		"minutes":    ints(0, 59, &rp.Minutes),
		"month_days": ints(1, 31, &rp.MonthDays),
		"week_days": func(v *yaml.Node, p string) {
			for i, w := range d.stringList(v, p) {
				day := strings.ToLower(strings.TrimSpace(w))
				if !slices.Contains(weekDays, day) {
					d.errorf(v, fmt.Sprintf("%s[%d]", p, i), "expected a week day (monday ... sunday), got %q", w)
					continue
				}
				rp.WeekDays = append(rp.WeekDays, day)
			}
		},
	})
	return rp
}

var weekDays = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// triggerCron is a trigger as a cron expression: a cron trigger's own, or a recurrence's
// equivalent (intervals above 1 only for minutes and hours, which cron steps express).
func triggerCron(t compute.ScheduleTrigger) (string, error) {
	if t.Type == "cron" {
		return t.Expression, nil
	}
	interval := max(t.Interval, 1)
	rp := compute.RecurrencePattern{}
	if t.Schedule != nil {
		rp = *t.Schedule
	}
	list := func(vs []int, def string) string {
		if len(vs) == 0 {
			return def
		}
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = strconv.Itoa(v)
		}
		return strings.Join(parts, ",")
	}
	minutes, hours := list(rp.Minutes, "0"), list(rp.Hours, "0")
	var days []string
	for _, w := range rp.WeekDays {
		days = append(days, strconv.Itoa(slices.Index(weekDays, w)))
	}
	dow := "*"
	if len(days) > 0 {
		dow = strings.Join(days, ",")
	}
	switch {
	case t.Frequency == "minute":
		return fmt.Sprintf("*/%d * * * *", interval), nil
	case t.Frequency == "hour":
		return fmt.Sprintf("%s */%d * * *", minutes, interval), nil
	case interval > 1:
		return "", fmt.Errorf("interval %d with frequency %s: Hangar's schedules repeat every %s (write a cron trigger)", interval, t.Frequency, t.Frequency)
	case t.Frequency == "day":
		return fmt.Sprintf("%s %s * * *", minutes, hours), nil
	case t.Frequency == "week":
		return fmt.Sprintf("%s %s * * %s", minutes, hours, dow), nil
	case t.Frequency == "month":
		return fmt.Sprintf("%s %s %s * *", minutes, hours, list(rp.MonthDays, "1")), nil
	}
	return "", fmt.Errorf("frequency: expected minute, hour, day, week or month")
}

// setupScripts decodes `setup_scripts: {creation_script, startup_script}`.
func (d *instanceDecoder) setupScripts(n *yaml.Node, path string) *compute.SetupScripts {
	ss := &compute.SetupScripts{}
	d.mapping(n, path, fields{
		"creation_script": func(v *yaml.Node, p string) { ss.CreationScript = d.setupScript(v, p) },
		"startup_script":  func(v *yaml.Node, p string) { ss.StartupScript = d.setupScript(v, p) },
	})
	return ss
}

// setupScript decodes a script reference in Azure's YAML form {path, command, timeout_minutes}
// or its REST form {script_source_path, script_arguments, timeout}; the script file is read now
// (relative to the compute file), its arguments split into words.
func (d *instanceDecoder) setupScript(n *yaml.Node, path string) *compute.SetupScript {
	sc := &compute.SetupScript{}
	file := func(v *yaml.Node, p string) {
		abs, ok := d.computes.localFile(v, p)
		if !ok || !d.confined(v, p, d.str(v, p), abs) { // confine.go
			return
		}
		sc.Path = d.str(v, p)
		data, err := os.ReadFile(abs)
		switch {
		case err != nil:
			d.errorf(v, p, "read %s: %v", sc.Path, unwrapPathError(err))
		case len(data) > maxScriptBytes:
			d.errorf(v, p, "%s is %d bytes; a setup script may hold at most %d", sc.Path, len(data), maxScriptBytes)
		default:
			sc.Content = string(data)
		}
	}
	args := func(v *yaml.Node, p string) {
		words, err := splitWords(d.str(v, p))
		if err != nil {
			d.errorf(v, p, "%v", err)
		}
		sc.Args = words
	}
	got := d.mapping(n, path, fields{
		"path": file, "script_source_path": file,
		"command": args, "script_arguments": args,
		"timeout_minutes": func(v *yaml.Node, p string) { sc.TimeoutMinutes, _ = d.boundedInt(v, p, 1, 24*60) },
		"timeout": func(v *yaml.Node, p string) {
			if secs, ok := d.seconds(v, p); ok {
				sc.TimeoutMinutes = int(max((secs+59)/60, 1))
			}
		},
		"script_source": func(v *yaml.Node, p string) { d.enum(v, p, "workspaceStorage", "inline") },
	})
	if n.Kind == yaml.MappingNode && got["path"] == nil && got["script_source_path"] == nil {
		d.required(n, join(path, "path"))
	}
	return sc
}

// splitWords splits script arguments into words as a shell would, with quotes and backslashes,
// and refuses what a shell would expand or run ($, `, ;, |, &, <, >, parentheses): the words
// are passed to the script as they are.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'' && r == '\'':
			quote = 0
		case quote == '\'':
			cur.WriteRune(r)
		case r == '$' || r == '`':
			return nil, fmt.Errorf("%q: arguments are passed as words; $ and ` are not expanded (quote them with ')", s)
		case quote == '"' && r == '"':
			quote = 0
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case quote == '"':
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case strings.ContainsRune(";|&<>()", r):
			return nil, fmt.Errorf("%q: %c is not allowed in script arguments (quote it)", s, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unterminated %c quote", s, quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
