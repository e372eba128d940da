package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/remote"
	"github.com/hangar-ml/hangar/internal/slurm"
)

// specTTL is how long a target's connection is used before its stored spec is read again (so
// that `compute update` takes effect without a restart).
const specTTL = 30 * time.Second

// target is an attached cluster as the backend uses it: where its commands run and where Hangar's
// files live on its shared filesystem.
type target struct {
	name   string
	spec   compute.SlurmSpec
	key    string // the spec's JSON, to notice an update
	loaded time.Time
	r      remote.Runner
	client *remote.Client // the login host; nil when commands run on the server's machine
	work   string         // absolute: runs/, cache/blobs
	bin    string         // absolute: the hangar binary the batch script starts
	poll   poller
}

// target returns the named target's connection, opening it (and installing hangar) the first time.
func (b *Backend) target(ctx context.Context, name string) (*target, error) {
	b.mu.Lock()
	t := b.targets[name]
	fresh := t != nil && time.Since(t.loaded) < specTTL
	b.mu.Unlock()
	if fresh {
		return t, nil
	}
	st, err := b.Targets(ctx, name)
	if err != nil {
		return nil, err
	}
	if st.Spec.Slurm == nil {
		return nil, fmt.Errorf("compute %s is not a slurm target", name)
	}
	key, _ := json.Marshal(st.Spec.Slurm)
	if t != nil && t.key == string(key) {
		b.mu.Lock()
		t.loaded = time.Now()
		b.mu.Unlock()
		return t, nil
	}
	nt, err := b.open(ctx, name, *st.Spec.Slurm)
	if err != nil {
		return nil, err
	}
	nt.key = string(key)
	if err := nt.install(ctx, b.Exe); err != nil {
		nt.close()
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.targets == nil {
		b.targets = map[string]*target{}
	}
	old := b.targets[name]
	if old != nil && old != t { // another call opened it meanwhile
		nt.close()
		return old, nil
	}
	if old != nil {
		old.close() // its spec changed
	}
	b.targets[name] = nt
	return nt, nil
}

// open connects to where the target's Slurm commands run: the login host over SSH, or this machine.
func (b *Backend) open(ctx context.Context, name string, s compute.SlurmSpec) (*target, error) {
	t := &target{name: name, spec: s, loaded: time.Now(), poll: poller{refresh: b.refresh()}}
	if s.Login == nil {
		if err := os.MkdirAll(b.Root, 0o755); err != nil {
			return nil, fmt.Errorf("slurm work directory: %w", err)
		}
		root, err := filepath.Abs(b.Root)
		if err != nil {
			return nil, err
		}
		t.r, t.work = &remote.Local{Dir: root}, root
		return t, nil
	}
	client, err := remote.Connect(ctx, remote.ConfigFor(*s.Login), remote.ClientOptions{
		Log: b.Log.With("target", name),
		OnState: func(st remote.State) {
			b.Log.Info("login host connection", "target", name, "connected", st.Connected, "err", st.Err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to %s's login host: %w", name, err)
	}
	t.r, t.client = client, client
	work, err := remote.WorkDir(ctx, client, s.Login.WorkDir)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t.work = work
	return t, nil
}

// install puts this hangar binary under the work directory (content-addressed, once per version),
// where every compute node finds it on the shared filesystem.
func (t *target) install(ctx context.Context, exe string) error {
	rel, _, err := remote.PutBinary(ctx, t.r, exe, "hangar")
	if err != nil {
		return fmt.Errorf("%s: install hangar: %w", t.name, err)
	}
	if t.client == nil {
		t.bin = filepath.Join(t.work, rel)
		return nil
	}
	home, err := remote.Home(ctx, t.r)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	t.bin = path.Join(home, rel)
	return nil
}

func (t *target) close() {
	if t.client != nil {
		t.client.Close()
	}
}

// serverSecrets are the variables of the server's environment that hold its own credentials:
// its token and URL, its database's URL (with the database's password) and a cluster join token.
var serverSecrets = []string{"HANGAR_TOKEN", "HANGAR_URL", "HANGAR_DATABASE_URL", "HANGAR_JOIN_TOKEN"}

// line builds a Slurm command line: without the server's own credentials in its environment (sbatch
// exports the environment into the job, where Slurm keeps it with the job's record), and with
// SLURM_CONF when the target names one.
func (t *target) line(argv ...string) string {
	l := "env"
	for _, v := range serverSecrets {
		l += " -u " + v
	}
	if t.spec.SlurmConf != "" {
		l += " SLURM_CONF=" + remote.Quote(t.spec.SlurmConf)
	}
	return l + " " + remote.Join(argv...)
}

// output runs a Slurm command and returns its standard output.
func (t *target) output(ctx context.Context, argv ...string) (string, error) {
	out, err := remote.Output(ctx, t.r, t.line(argv...))
	if err != nil {
		return string(out), fmt.Errorf("%s: %w", argv[0], err)
	}
	return string(out), nil
}

// stderrHas reports whether err is a command's non-zero exit whose standard error says s.
func stderrHas(err error, s string) bool {
	var ee *remote.ExitError
	return errors.As(err, &ee) && strings.Contains(ee.Stderr, s)
}

// job returns what Slurm says about a job: from a shared squeue answer while the job is queued or
// running, then (once it ended or squeue forgot it) from scontrol show job, then accounting (sacct,
// or sacct -c with jobcomp/filetxt when accounting storage is off). known is false when no source
// knows the job.
func (t *target) job(ctx context.Context, id string) (j slurm.Job, known bool, err error) {
	p := &t.poll
	p.mu.Lock()
	defer p.mu.Unlock()
	if j, ok := p.final[id]; ok {
		return j, true, nil
	}
	seen, ok, err := p.lookup(ctx, t, id)
	if err != nil {
		return slurm.Job{}, false, err
	}
	if ok && !slurm.Judge(seen).Final {
		return seen, true, nil
	}
	d, dok, err := t.details(ctx, id)
	if err != nil {
		return slurm.Job{}, false, err
	}
	switch {
	case dok && slurm.Judge(d).Final:
		p.remember(d)
		return d, true, nil
	case dok:
		return d, true, nil // squeue was a moment behind: it runs again
	case ok:
		p.remember(seen) // ended, and no exit code to be had
		return seen, true, nil
	}
	return slurm.Job{}, false, nil
}

// details asks scontrol, then accounting, about one job.
func (t *target) details(ctx context.Context, id string) (slurm.Job, bool, error) {
	out, err := t.output(ctx, "scontrol", "show", "job", id)
	switch {
	case err == nil:
		jobs, err := slurm.ParseScontrolJobs(out)
		if err != nil {
			return slurm.Job{}, false, err
		}
		for _, j := range jobs {
			if j.ID == id {
				return j, true, nil
			}
		}
	case !stderrHas(err, "Invalid job id"):
		return slurm.Job{}, false, err
	}
	args := []string{"sacct", "--noheader", "--parsable2", "--allocations", "--jobs", id, "--format", slurm.SacctFields}
	out, err = t.output(ctx, args...)
	if err != nil && stderrHas(err, "accounting storage is disabled") {
		out, err = t.output(ctx, append(args[:1:1], append([]string{"--completion"}, args[1:]...)...)...)
	}
	if err != nil {
		return slurm.Job{}, false, err
	}
	jobs, err := slurm.ParseSacct(out)
	if err != nil {
		return slurm.Job{}, false, err
	}
	found, ok := slurm.Job{}, false
	for _, j := range jobs {
		if j.ID == id {
			found, ok = j, true // the last record wins: a requeued job's latest
		}
	}
	return found, ok, nil
}

// poller shares one squeue answer among the status questions of a short while, so that a
// thousand queued runs cost one squeue a second, not a thousand.
type poller struct {
	refresh time.Duration

	mu      sync.Mutex
	at      time.Time
	asked   map[string]bool      // the ids the last squeue asked about
	seen    map[string]slurm.Job // its answer
	tracked map[string]time.Time // ids asked about lately, and when
	final   map[string]slurm.Job // ended jobs: they do not change
}

// forgetAfter drops a job from the shared squeue once nobody has asked about it for this long.
const forgetAfter = 2 * time.Minute

// lookup answers from the last squeue when it asked about id and is fresh, else runs squeue for
// every job asked about lately. Called with p.mu held.
func (p *poller) lookup(ctx context.Context, t *target, id string) (slurm.Job, bool, error) {
	now := time.Now()
	if p.tracked == nil {
		p.tracked = map[string]time.Time{}
	}
	p.tracked[id] = now
	if !p.asked[id] || now.Sub(p.at) >= p.refresh {
		ids := make([]string, 0, len(p.tracked))
		for k, at := range p.tracked {
			if now.Sub(at) > forgetAfter {
				delete(p.tracked, k)
				continue
			}
			ids = append(ids, k)
		}
		out, err := t.output(ctx, "squeue", "--noheader", "--states=all", "--jobs="+strings.Join(ids, ","), "--format="+slurm.SqueueFormat)
		if err != nil && !stderrHas(err, "Invalid job id") { // only unknown ids: no job to show
			return slurm.Job{}, false, err
		}
		jobs, perr := slurm.ParseSqueue(out)
		if err == nil && perr != nil {
			return slurm.Job{}, false, perr
		}
		p.at, p.asked, p.seen = now, map[string]bool{}, map[string]slurm.Job{}
		for _, k := range ids {
			p.asked[k] = true
		}
		for _, j := range jobs {
			p.seen[j.ID] = j
		}
	}
	j, ok := p.seen[id]
	return j, ok, nil
}

// track adds a job to the next squeue (a job just submitted: its status is asked soon).
func (p *poller) track(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tracked == nil {
		p.tracked = map[string]time.Time{}
	}
	p.tracked[id] = time.Now()
}

// remember keeps an ended job's record. Called with p.mu held.
func (p *poller) remember(j slurm.Job) {
	if p.final == nil {
		p.final = map[string]slurm.Job{}
	}
	p.final[j.ID] = j
	delete(p.tracked, j.ID)
}

// forget drops a job's cached answers (after a cancel, its state is about to change).
func (p *poller) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.asked, id)
}
