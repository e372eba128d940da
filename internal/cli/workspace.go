package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hangar-ml/hangar/internal/home"
)

func newWorkspaceCmd(env *Env) *cobra.Command {
	cmd := groupCmd(&cobra.Command{
		Use:   "workspace",
		Short: "Show the workspace; back up, restore and migrate the local workspace directory; free unreferenced blobs",
		Long: `Back up and restore the local workspace directory ($HANGAR_HOME, default ~/.hangar, or --home),
or move its database from SQLite to PostgreSQL. These commands work on the files of the machine
that holds the workspace, not through its server. gc asks the workspace's server to free the
blobs nothing references; show says which workspace the CLI talks to.`,
		Example: `  hangar workspace backup /backups/hangar-$(date +%F)
  hangar workspace restore /backups/hangar-2026-11-23
  HANGAR_DATABASE_URL=postgres://hangar@db.internal/hangar hangar workspace migrate
  hangar workspace gc --dry-run`,
	})
	cmd.AddCommand(newWorkspaceBackupCmd(env), newWorkspaceRestoreCmd(env), newWorkspaceMigrateCmd(env), newWorkspaceGCCmd(env),
		newWorkspaceShowCmd(env))
	return cmd
}

func newWorkspaceBackupCmd(env *Env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "backup DIR",
		Short: "Copy the workspace into DIR, consistently, while its server runs",
		Long: `Copy the workspace into DIR (a new or empty directory): a consistent copy of the database
(jobs, events, logs, metrics, computes, settings, the run token key) taken in one read
transaction, then every blob (code snapshots, inputs, outputs, artifacts), each checked against
its hash. The server may be running and jobs may be live: what they write after the database
copy began is not in the backup. The database copy is checked page by page before the command
succeeds.

The backup also holds secret.key, the key that seals compute secrets (SSH keys and passwords
of attached VMs) in the database: without it those secrets cannot be read back. It holds the
workspace token too. Keep the backup as private as the workspace: it is written readable by
you only (directory 0700, files 0600).

Run directories (local/runs) are not copied: a job's outputs and logs are in the backup once the
job has reported them.`,
		Example: `  hangar workspace backup /backups/hangar-$(date +%F)
  hangar workspace backup ./b1 --home /srv/hangar -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := workspaceHome(dir)
			if err != nil {
				return err
			}
			info, err := h.Backup(cmd.Context(), args[0], time.Now())
			if err != nil {
				return err
			}
			return env.printData(info, func(w io.Writer) error {
				fmt.Fprintf(w, "Backed up %s to %s: database %s (schema %d), %d blobs (%s), %s\n",
					info.Workspace, info.Dir, humanBytes(info.DatabaseBytes), info.SchemaVersion,
					info.Blobs, humanBytes(info.BlobBytes), orNone(info.Files))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&dir, "home", "", "workspace directory (default $HANGAR_HOME or ~/.hangar)")
	return cmd
}

func newWorkspaceRestoreCmd(env *Env) *cobra.Command {
	var dir string
	var force bool
	cmd := &cobra.Command{
		Use:   "restore BACKUP_DIR",
		Short: "Restore a backup into a stopped or new workspace",
		Long: `Restore a backup made by "hangar workspace backup" into the workspace directory. No server may
run for it (stop it with "hangar server stop"); none can start while the restore runs. The
backup's database is checked page by page first.

Into a new or empty directory, or one whose database is missing or empty (the server refuses
to start over a lost database and points here), the restore just proceeds. Over a workspace
that still has a database, --force is needed. Nothing is deleted: the database, its -wal/-shm
files, and a secret.key or token that differ from the backup's are renamed with a
".before-restore-<time>" suffix. Blobs are added to those already there; run directories are
left alone.

After a restore the workspace is as it was when the backup was taken. The run token key is in
the backup, so the supervisors of runs that are still going report to the restored server and
finish normally; they resend the log lines it lacks, but metrics they reported between the
backup and the restore are missing. A run that ended between the two gets its final status from
its run directory (local target), without the logs, metrics and outputs it reported after the
backup. Runs created after the backup are unknown to the restored workspace.`,
		Example: `  hangar server stop
  hangar workspace restore /backups/hangar-2026-11-23
  hangar workspace restore /backups/hangar-2026-11-23 --home /srv/hangar --force`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := workspaceHome(dir)
			if err != nil {
				return err
			}
			info, err := h.Restore(cmd.Context(), args[0], force, time.Now())
			if err != nil {
				return err
			}
			return env.printData(info, func(w io.Writer) error {
				fmt.Fprintf(w, "Restored %s into %s (backup of %s): %s; %d blobs, %d of them new\n",
					info.From, info.Workspace, info.BackupCreatedAt.Local().Format("2006-01-02 15:04:05"),
					orNone(info.Files), info.Blobs, info.BlobsCopied)
				if len(info.MovedAside) > 0 {
					fmt.Fprintf(w, "Kept what it replaced, renamed: %s\n", strings.Join(info.MovedAside, ", "))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&dir, "home", "", "workspace directory (default $HANGAR_HOME or ~/.hangar)")
	cmd.Flags().BoolVar(&force, "force", false, "replace the workspace's database (the old one is kept, renamed)")
	return cmd
}

func newWorkspaceMigrateCmd(env *Env) *cobra.Command {
	var dir, to string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Copy the workspace's SQLite database into a new PostgreSQL database and switch to it",
		Long: `Copy every row of the workspace's SQLite database (workspace.db) into a new PostgreSQL
database, then record in the workspace directory that its database is PostgreSQL: from then on
its server starts only with the URL (hangar server --database URL, or HANGAR_DATABASE_URL), and
refuses to start on the SQLite file again. No server may run for it (stop it with "hangar server
stop"). The PostgreSQL database must be new (created empty, e.g. "createdb -O hangar hangar");
Hangar creates its tables there. The copy is one transaction, checked table by table: on any
error nothing is committed and the workspace stays on SQLite.

The SQLite file is left as it was (remove it once satisfied); blobs, secret.key and the token stay
in the workspace directory, which the server keeps using. Give the URL by --to or
HANGAR_DATABASE_URL; keep its password out of the command line (HANGAR_DATABASE_URL, or
~/.pgpass).`,
		Example: `  hangar server stop
  export HANGAR_DATABASE_URL=postgres://hangar@db.internal:5432/hangar?sslmode=verify-full
  hangar workspace migrate
  hangar server --listen 0.0.0.0:8080 --tls`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				to = os.Getenv(home.DatabaseEnv)
			}
			if to == "" {
				return fmt.Errorf("name the PostgreSQL database: --to URL or %s", home.DatabaseEnv)
			}
			h, err := workspaceHome(dir)
			if err != nil {
				return err
			}
			info, err := h.MigrateTo(cmd.Context(), to, func(table string, rows int64) {
				if env.Output == "" || env.Output == "table" {
					fmt.Fprintf(env.Stderr, "  %-22s %d rows\n", table, rows)
				}
			})
			if err != nil {
				return err
			}
			return env.printData(info, func(w io.Writer) error {
				fmt.Fprintf(w, "Copied %d rows in %d tables from %s to %s.\n", info.Rows(), len(info.Tables), info.From, info.To)
				fmt.Fprintf(w, "The workspace %s now starts on PostgreSQL only: hangar server --database URL, or %s.\n",
					info.Workspace, home.DatabaseEnv)
				fmt.Fprintf(w, "%s is kept as it was; remove it once satisfied.\n", info.From)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&dir, "home", "", "workspace directory (default $HANGAR_HOME or ~/.hangar)")
	cmd.Flags().StringVar(&to, "to", "", "URL of the new PostgreSQL database (default $"+home.DatabaseEnv+")")
	return cmd
}

// workspaceHome is --home, else $HANGAR_HOME, else ~/.hangar.
func workspaceHome(dir string) (home.Home, error) {
	if dir == "" {
		return home.Default()
	}
	abs, err := filepath.Abs(dir)
	return home.Home{Dir: abs}, err
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no key files"
	}
	return strings.Join(s, ", ")
}
