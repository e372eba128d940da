package cli

import (
	"io"
	"log/slog"

	"github.com/spf13/pflag"
)

// LogFlags are --log-level and --log-format for a long-running verb outside this package
// (`hangar agent`, internal/nodecmd), read as the server's are.
type LogFlags struct{ f logFlags }

// Register adds the flags to fl.
func (l *LogFlags) Register(fl *pflag.FlagSet) { l.f.register(fl) }

// Logger builds the logger the flags ask for, writing to w; a bad value is a usage error.
func (l *LogFlags) Logger(w io.Writer) (*slog.Logger, error) { return l.f.logger(w) }
