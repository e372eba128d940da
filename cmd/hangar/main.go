// Command hangar is the workspace server, the command-line client and the run supervisor in one binary.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/hangar-ml/hangar/internal/cli"
	"github.com/hangar-ml/hangar/internal/nodecmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli.Run(ctx, cli.Deps{Serve: serve, Node: nodecmd.Commands}, os.Args, os.Stderr))
}
