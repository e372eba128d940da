package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hangar-ml/hangar/internal/pattern"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/blob"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/snapshot"
	"github.com/hangar-ml/hangar/internal/store"
	"github.com/hangar-ml/hangar/internal/workspace"
)

// What a run's supervisors may write into the run's record, and when: metrics while the run is
// active, each node's artifacts once, log lines without ever rewriting one. Once the run ended,
// its tokens work for a short grace only (see Admit), and of its record only the log grows then.

// metricsPerAttempt numbers metrics: attempt n's are (n-1)·10¹² + their line in the metrics file.
const metricsPerAttempt = 1_000_000_000_000

var logFileRE = pattern.New(`^std_log(?:_node_([1-9][0-9]{0,5}))?\.txt$`)

// AppendLogs stores log lines a supervisor ships, only into the run's own log files (std_log.txt,
// and std_log_node_<n>.txt of its other nodes). Lines already stored are never rewritten
// (store.AppendLogs keeps the first text of a number). New lines are taken after the run's end
// as long as its token is (the grace of Admit): a supervisor that learns late that its run
// ended (an orphan stopped once its host is back) still records how its command ended.
func (c *Controller) AppendLogs(ctx context.Context, id, file string, lines []job.LogLine) (int64, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return 0, mapStoreErr(err)
	}
	m := logFileRE.FindStringSubmatch(file)
	if m == nil {
		return 0, invalidf("file: %q is not a run log (std_log.txt or std_log_node_<n>.txt)", file)
	}
	if m[1] != "" {
		if n, _ := strconv.Atoi(m[1]); n >= nodeCount(r) {
			return 0, invalidf("file: %q: run %s has %d node(s)", file, id, nodeCount(r))
		}
	}
	return c.Store.Runs.AppendLogs(ctx, id, file, lines)
}

// AppendMetrics stores metrics a supervisor ships, while the run is active, numbered in the
// range of the run's current attempt (stored ones are never rewritten).
func (c *Controller) AppendMetrics(ctx context.Context, id string, ms []job.Metric) (int64, error) {
	r, err := c.activeRun(ctx, id, "its metrics")
	if err != nil {
		return 0, err
	}
	base := int64(max(r.Attempt, 1)-1) * metricsPerAttempt
	for i, m := range ms {
		if m.Seq <= base || m.Seq > base+metricsPerAttempt {
			return 0, invalidf("metrics[%d].seq: %d is outside attempt %d's range (%d..%d]", i, m.Seq, max(r.Attempt, 1), base, base+metricsPerAttempt)
		}
	}
	return c.Store.Runs.AppendMetrics(ctx, id, ms)
}

// activeRun returns a run that has not ended; an ended run's record no longer changes.
func (c *Controller) activeRun(ctx context.Context, id, what string) (*job.Run, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if err := Ended(r, what); err != nil {
		return nil, err
	}
	return r, nil
}

func endedAt(r *job.Run) string {
	if r.EndedAt == nil {
		return ""
	}
	return " at " + r.EndedAt.UTC().Format(time.RFC3339)
}

// RegisterArtifacts records one node's collected artifacts. A node's part is write-once: the
// same report again is a retry and accepted, a different one is refused. Node 0's report also
// assembles the run's artifacts from every node's part once they are all in, or once the others
// had NodeOutputsWait to deliver; until then the reply lists the nodes awaited.
func (c *Controller) RegisterArtifacts(ctx context.Context, id string, rep api.ArtifactsReport) (*api.ArtifactsReply, error) {
	r, err := c.Store.Runs.Run(ctx, id)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	if rep.Node < 0 || rep.Node >= nodeCount(r) {
		return nil, invalidf("node_rank: run %s has %d node(s), got %d", id, nodeCount(r), rep.Node)
	}
	attempt := max(r.Attempt, 1)
	part := store.RunPart{RunID: id, Attempt: attempt, Node: rep.Node, Artifacts: rep.Artifacts,
		NamedOutputs: rep.NamedOutputs, RegisteredAt: c.Now()}
	// A retry (node 0 repeats its report while it waits for the others) or a frozen run: only
	// what was registered is accepted, and it was checked then.
	stored, err := c.part(ctx, id, attempt, rep.Node)
	registered := false
	if err == nil && !stored.Registered() && !r.Status.Terminal() && r.ArtifactsHash == "" {
		if err := c.checkManifests(rep); err != nil {
			return nil, err
		}
		stored, err = c.Store.Runs.RegisterRunPart(ctx, part)
		registered = err == nil && stored.Registered()
	}
	if err != nil {
		return nil, fmt.Errorf("register artifacts of %s: %w", id, err)
	}
	if err := samePart(r, stored, part); err != nil {
		return nil, err
	}
	var waiting []int
	if rep.Node == 0 {
		if waiting, err = c.assemble(ctx, id, false); err != nil {
			return nil, fmt.Errorf("assemble artifacts of %s: %w", id, err)
		}
	}
	// The node may drop what it collected once told it is registered: a part the run's
	// artifacts were not assembled from yet (whose write made itself durable) is made durable here.
	if registered && (rep.Node != 0 || len(waiting) > 0) {
		if err := c.Store.Sync(ctx); err != nil {
			return nil, fmt.Errorf("register artifacts of %s: %w", id, err)
		}
	}
	return &api.ArtifactsReply{WaitingFor: waiting}, nil
}

// part returns a node's part, or an unregistered one.
func (c *Controller) part(ctx context.Context, id string, attempt, node int) (*store.RunPart, error) {
	parts, err := c.Store.Runs.RunParts(ctx, id, attempt)
	if err != nil {
		return nil, err
	}
	for i := range parts {
		if parts[i].Node == node {
			return &parts[i], nil
		}
	}
	return &store.RunPart{RunID: id, Attempt: attempt, Node: node}, nil
}

// samePart accepts a registration whose part is stored as asked, and explains a refusal.
func samePart(r *job.Run, stored *store.RunPart, asked store.RunPart) error {
	who := fmt.Sprintf("run %s", r.ID)
	if asked.Node > 0 {
		who = fmt.Sprintf("node %d of run %s", asked.Node, r.ID)
	}
	switch {
	case !stored.Registered() && r.Status.Terminal() && r.ArtifactsHash == "":
		return conflictf("run %s ended (%s)%s: its artifacts can no longer change", r.ID, r.Status, endedAt(r))
	case !stored.Registered() && asked.Node > 0: // assembled before this part came (or meanwhile)
		return conflictf("the artifacts of run %s were assembled without node %d (it delivered after the wait)", r.ID, asked.Node)
	case !stored.Registered(): // a run whose artifacts were registered before parts were recorded
		return conflictf("run %s registered its artifacts already; they cannot be replaced", r.ID)
	case stored.Artifacts != asked.Artifacts || !maps.Equal(stored.NamedOutputs, nonNil(asked.NamedOutputs)):
		return conflictf("%s registered its artifacts already (manifest %s); they cannot be replaced", who, stored.Artifacts)
	}
	return nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// checkManifests checks that a report's manifests were uploaded and are manifests.
func (c *Controller) checkManifests(rep api.ArtifactsReport) error {
	hashes := []string{rep.Artifacts}
	for _, h := range rep.NamedOutputs {
		hashes = append(hashes, h)
	}
	for _, h := range hashes {
		if !blob.ValidHash(h) {
			return invalidf("artifacts: %q is not a manifest hash", h)
		}
	}
	if missing := c.Blobs.Missing(hashes); len(missing) > 0 {
		return invalidf("artifact manifests not uploaded: %v", missing)
	}
	for _, h := range hashes {
		if _, err := c.readManifest(h); err != nil {
			return invalidf("artifacts: %v", err)
		}
	}
	return nil
}

func (c *Controller) readManifest(hash string) (*snapshot.Manifest, error) {
	return workspace.ReadManifest(c.Blobs, hash)
}

// assemble sets the run's artifacts from its nodes' parts when planAssembly says so, and
// returns the nodes still awaited. final (node 0 reporting the end) assembles what there is.
func (c *Controller) assemble(ctx context.Context, id string, final bool) ([]int, error) {
	for range 5 { // a part registered meanwhile makes the write stale: plan again
		r, err := c.Store.Runs.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		if r.ArtifactsHash != "" {
			return nil, nil
		}
		parts, err := c.Store.Runs.RunParts(ctx, id, max(r.Attempt, 1))
		if err != nil {
			return nil, err
		}
		plan := planAssembly(parts, nodeCount(r), c.Now(), c.Settings.NodeOutputsWait, final)
		if !plan.ready {
			return plan.waiting, nil
		}
		arts, named, warnings, err := c.mergeParts(parts, plan)
		if err != nil {
			return nil, err
		}
		named, rowWarnings, err := c.Parents.mergeParallelRows(r, named)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, rowWarnings...)
		_, err = c.Store.RunWrites.SetRunArtifacts(ctx, id, plan.from, arts, named, warnings)
		if errors.Is(err, store.ErrStale) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(plan.waiting) > 0 {
			c.Log.Warn("artifacts assembled without some nodes", "run", id, "missing", plan.waiting)
		}
		c.Changed(id)
		return nil, nil
	}
	return nil, fmt.Errorf("run %s: its parts kept changing", id)
}

// mergeParts merges the registered parts of plan.from (see mergeTrees); one part is used as it is.
func (c *Controller) mergeParts(parts []store.RunPart, plan assemblyPlan) (string, map[string]string, []string, error) {
	var regs []store.RunPart
	for _, p := range parts {
		if p.Registered() && slices.Contains(plan.from, p.Node) {
			regs = append(regs, p)
		}
	}
	var warnings []string
	if len(plan.waiting) > 0 {
		warnings = append(warnings, missingWarning(plan.waiting, c.Settings.NodeOutputsWait))
	}
	if len(regs) == 1 {
		return regs[0].Artifacts, nonNil(regs[0].NamedOutputs), warnings, nil
	}
	merge := func(what string, hashOf func(p store.RunPart) string) (string, error) {
		var trees []*snapshot.Manifest
		for _, p := range regs {
			if h := hashOf(p); h != "" {
				m, err := c.readManifest(h)
				if err != nil {
					return "", err
				}
				trees = append(trees, m)
			}
		}
		m, conflicts := mergeTrees(trees)
		if len(conflicts) > 0 {
			warnings = append(warnings, conflictWarning(what, conflicts))
		}
		b, _, err := m.Encode()
		if err != nil {
			return "", err
		}
		return c.Blobs.PutBytes(b)
	}
	arts, err := merge("artifacts", func(p store.RunPart) string { return p.Artifacts })
	if err != nil {
		return "", nil, nil, err
	}
	named := map[string]string{}
	for _, p := range regs {
		for name := range p.NamedOutputs {
			if _, done := named[name]; done {
				continue
			}
			if named[name], err = merge("output "+name, func(p store.RunPart) string { return p.NamedOutputs[name] }); err != nil {
				return "", nil, nil, err
			}
		}
	}
	return arts, named, warnings, nil
}

// nodeCount is how many nodes run the run: those of its placement, else one.
func nodeCount(r *job.Run) int { return r.Placement.NodeCount() }
