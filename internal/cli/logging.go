package cli

import (
	"io"
	"log/slog"

	"github.com/spf13/pflag"
)

// logFlags are the --log-level and --log-format of the long-running verbs (server, agent).
type logFlags struct {
	level, format string
}

func (f *logFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.level, "log-level", "info", "debug, info, warn or error")
	fl.StringVar(&f.format, "log-format", "text", "text (key=value lines) or json (one JSON object a line, for log collectors)")
}

// logger builds the logger the flags ask for, writing to w.
func (f *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(f.level)); err != nil {
		return nil, usageError("--log-level: %v", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch f.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError("--log-format: %q is not text or json", f.format)
}
