package slurm

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Output formats the parsers expect; the backend passes them to the commands. The job name goes
// last: it is the one field that may hold the separator.
const (
	// SqueueFormat is for `squeue --noheader --states=all --format=...`.
	SqueueFormat = "%i|%T|%r|%N|%j"
	// SacctFields is for `sacct [-c] --noheader --parsable2 --format=...`.
	SacctFields = "JobID,State,ExitCode,NodeList,JobName"
	// SinfoFormat is for `sinfo --noheader --Node --format=...`.
	SinfoFormat = "%N|%T|%c|%m|%G"
)

var (
	jobIDRE   = regexp.MustCompile(`^[0-9]+$`)
	stateRE   = regexp.MustCompile(`^[A-Z_]+$`)
	exitRE    = regexp.MustCompile(`^([0-9]+):([0-9]+)$`)
	keyRE     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:/]*=`)
	sbatchErr = errors.New("sbatch printed no job id")
)

// ParseSbatch reads `sbatch --parsable` output: "123" or "123;cluster". Lines before the id
// (warnings some sites print) are skipped.
func ParseSbatch(out string) (string, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	id, _, _ := strings.Cut(last, ";")
	if !jobIDRE.MatchString(id) {
		if last == "" {
			return "", sbatchErr
		}
		return "", fmt.Errorf("%w: got %q", sbatchErr, last)
	}
	return id, nil
}

// ParseSqueue reads squeue output in SqueueFormat, one job per line.
func ParseSqueue(out string) ([]Job, error) {
	var jobs []Job
	for i, line := range lines(out) {
		f := strings.SplitN(line, "|", 5)
		if len(f) != 5 {
			return nil, fmt.Errorf("squeue line %d: want 5 fields separated by |, got %q", i+1, line)
		}
		j := Job{ID: f[0], State: baseState(f[1]), Reason: null(f[2]), NodeList: null(f[3]), Name: f[4]}
		if err := check(j); err != nil {
			return nil, fmt.Errorf("squeue line %d: %w", i+1, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// ParseSacct reads `sacct --parsable2 --noheader` output in SacctFields. Step lines (12.batch,
// 12.0) are skipped: a job's own line carries its state.
func ParseSacct(out string) ([]Job, error) {
	var jobs []Job
	for i, line := range lines(out) {
		f := strings.SplitN(line, "|", 5)
		if len(f) != 5 {
			return nil, fmt.Errorf("sacct line %d: want 5 fields separated by |, got %q", i+1, line)
		}
		if strings.Contains(f[0], ".") {
			continue
		}
		state, by, _ := strings.Cut(f[1], " by ")
		j := Job{ID: f[0], State: baseState(state), By: strings.TrimSpace(by), NodeList: null(f[3]), Name: f[4]}
		if f[2] != "" {
			e, err := parseExit(f[2])
			if err != nil {
				return nil, fmt.Errorf("sacct line %d: %w", i+1, err)
			}
			j.Exit = e
		}
		if err := check(j); err != nil {
			return nil, fmt.Errorf("sacct line %d: %w", i+1, err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// ParseScontrolJobs reads `scontrol show job` output: records of Key=Value pairs separated by blank
// lines. A value may hold spaces (JobName=a b, Command=/x y): words without a Key= belong to the
// value before them.
func ParseScontrolJobs(out string) ([]Job, error) {
	var jobs []Job
	for _, rec := range records(out) {
		kv := pairs(rec)
		j := Job{ID: kv["JobId"], Name: kv["JobName"], State: baseState(kv["JobState"]),
			Reason: null(kv["Reason"]), NodeList: null(kv["NodeList"])}
		if e, ok := kv["ExitCode"]; ok && e != "" {
			x, err := parseExit(e)
			if err != nil {
				return nil, fmt.Errorf("scontrol job %s: %w", j.ID, err)
			}
			j.Exit = x
		}
		if err := check(j); err != nil {
			return nil, fmt.Errorf("scontrol: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// ParseSinfo reads `sinfo --noheader --Node` output in SinfoFormat. A node listed once per
// partition appears once.
func ParseSinfo(out string) ([]Node, error) {
	var nodes []Node
	seen := map[string]bool{}
	for i, line := range lines(out) {
		f := strings.Split(line, "|")
		if len(f) != 5 || f[0] == "" {
			return nil, fmt.Errorf("sinfo line %d: want 5 fields separated by |, got %q", i+1, line)
		}
		cpus, err := strconv.Atoi(f[2])
		if err != nil || cpus < 0 {
			return nil, fmt.Errorf("sinfo line %d: CPUs %q is not a count", i+1, f[2])
		}
		mem, err := strconv.ParseInt(strings.TrimSuffix(f[3], "+"), 10, 64)
		if err != nil || mem < 0 {
			return nil, fmt.Errorf("sinfo line %d: memory %q is not a number of MB", i+1, f[3])
		}
		if seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		nodes = append(nodes, Node{Name: f[0], State: f[1], CPUs: cpus, MemoryMB: mem, Gres: null(f[4])})
	}
	return nodes, nil
}

// parseExit reads "code:signal".
func parseExit(s string) (*Exit, error) {
	m := exitRE.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("exit code %q is not code:signal", s)
	}
	code, err1 := strconv.Atoi(m[1])
	sig, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || code > 255 || sig > 255 {
		return nil, fmt.Errorf("exit code %q is out of range", s)
	}
	return &Exit{Code: code, Signal: sig}, nil
}

// baseState drops the flags some outputs append ("CANCELLED+", "COMPLETING,REQUEUED").
func baseState(s string) string {
	s = strings.TrimSpace(s)
	s, _, _ = strings.Cut(s, ",")
	return strings.TrimRight(s, "+")
}

func check(j Job) error {
	if !jobIDRE.MatchString(j.ID) {
		return fmt.Errorf("job id %q is not a number", j.ID)
	}
	if !stateRE.MatchString(j.State) {
		return fmt.Errorf("job %s: state %q is not a Slurm state", j.ID, j.State)
	}
	return nil
}

// null maps Slurm's spellings of nothing to "".
func null(s string) string {
	s = strings.TrimSpace(s)
	if s == "(null)" || s == "None" || s == "N/A" {
		return ""
	}
	return s
}

// lines returns the non-empty lines of out, trimmed of a trailing carriage return.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// records splits scontrol output into records at blank lines.
func records(out string) [][]string {
	var recs [][]string
	var cur []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				recs = append(recs, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		recs = append(recs, cur)
	}
	return recs
}

// pairs reads the Key=Value words of a record; a word that does not start a key continues the
// previous value (joined with one space).
func pairs(rec []string) map[string]string {
	kv := map[string]string{}
	last := ""
	for _, l := range rec {
		for _, w := range strings.Fields(l) {
			if keyRE.MatchString(w) {
				k, v, _ := strings.Cut(w, "=")
				last = ""
				if _, dup := kv[k]; !dup {
					kv[k], last = v, k
				}
				continue
			}
			if last != "" {
				kv[last] += " " + w
			}
		}
		last = "" // a value does not run over a line break
	}
	return kv
}
