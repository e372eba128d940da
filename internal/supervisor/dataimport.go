package supervisor

import (
	"context"
	"fmt"
	"strings"

	"github.com/hangar-ml/hangar/internal/api"
	"github.com/hangar-ml/hangar/internal/dataimport"
	"github.com/hangar-ml/hangar/internal/dataset"
	"github.com/hangar-ml/hangar/internal/job"
)

// A data import's run (docs/data.md "Connections and data import"): no user command runs. The
// supervisor, outside the run's box, fetches the connection's target and credentials with its
// run token (answered only while the run is live), reads the source into the output
// job.ImportOutput, and from then on redacts the credentials' values from the run's log, its
// reasons and its own log lines. The output is collected as any output is; the server registers
// the data version when the run completes.

// importing reports whether this run is a data import.
func (s *Supervisor) importing() bool { return s.spec.Spec.Import != nil }

// runImport reads the import's source into its output folder.
func (s *Supervisor) runImport(ctx context.Context, w *workspace, p *pipeline) job.Result {
	imp := s.spec.Spec.Import
	s.mu.Lock()
	s.boundCommand = importSummary(imp)
	s.mu.Unlock()
	s.report(job.Running, "")
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-s.canceled:
			stop()
		case <-ctx.Done():
		}
	}()
	fail := func(format string, args ...any) job.Result {
		msg := fmt.Sprintf(format, args...)
		fmt.Fprintf(p.capt, "hangar: %s\n", msg)
		if s.isCanceled() {
			return job.Result{State: s.stopState(s.cancelWhy), Reason: s.cancelWhy}
		}
		return job.Result{State: job.Failed, Reason: msg}
	}
	got, err := retryValue(ctx, s.conn, "fetch the connection", func(ctx context.Context) (*api.ConnectionCredentials, error) {
		return s.conn.c.Runs.ConnectionCredentials(ctx, s.cfg.RunID)
	})
	if err != nil {
		return fail("import from connection %s: %v", imp.Connection, err)
	}
	r := newRedactor(got.Credentials.Values())
	s.secrets.red.Store(r)
	p.capt.setRedactor(r)
	dir := w.outputDirs[job.ImportOutput]
	fmt.Fprintf(p.capt, "hangar: %s\n", importSummary(imp))
	switch imp.SourceType {
	case dataset.SourceDatabase:
		st, err := dataimport.Database(ctx, got.Target, got.Credentials, imp.Query, dir)
		if err != nil {
			return fail("import from connection %s: %v", imp.Connection, err)
		}
		fmt.Fprintf(p.capt, "hangar: imported %d rows of %d columns (%d bytes of CSV) into %s; data asset %s version %s is registered when the run completes\n",
			st.Rows, st.Columns, st.Bytes, job.ImportOutput, imp.Asset, imp.Version)
	case dataset.SourceFileSystem:
		if imp.Store == nil {
			return fail("import from connection %s: the run's spec says not where the files lie", imp.Connection)
		}
		st, err := dataimport.Files(ctx, *imp.Store, got.Credentials, dir)
		if err != nil {
			return fail("import from connection %s: %v", imp.Connection, err)
		}
		fmt.Fprintf(p.capt, "hangar: copied %d files (%d bytes) from %s into %s; data asset %s version %s is registered when the run completes\n",
			st.Files, st.Bytes, imp.Store.URI(), job.ImportOutput, imp.Asset, imp.Version)
	default:
		return fail("import: source type %q is not one Hangar reads", imp.SourceType)
	}
	zero := 0
	return job.Result{State: job.Completed, ExitCode: &zero}
}

// importSummary says what an import reads, for job show's command and the log: the connection
// and the query's first line, or the path.
func importSummary(imp *job.Import) string {
	if imp.SourceType == dataset.SourceDatabase {
		q, _, more := strings.Cut(imp.Query, "\n")
		if more {
			q += " ..."
		}
		return fmt.Sprintf("import from connection %s: %s", imp.Connection, q)
	}
	return fmt.Sprintf("import from connection %s: %s", imp.Connection, imp.Path)
}
