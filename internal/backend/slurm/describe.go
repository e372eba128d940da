package slurm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/remote"
	"github.com/hangar-ml/hangar/internal/slurm"
)

// Describe reports the target's partition as Slurm sees it now (sinfo): the Slurm version and the
// partition in OS, the nodes with their states in Hostname ("node state, node state"), and the
// partition's CPUs, memory and GPUs added up.
func (b *Backend) Describe(ctx context.Context, ct compute.Target) (*compute.NodeInfo, error) {
	t, err := b.target(ctx, ct.Name)
	if err != nil {
		return nil, err
	}
	return describe(ctx, t)
}

// Attach checks that Slurm's commands answer where the target runs them (sinfo), that its partition
// exists, and for a login host that it runs this binary's architecture; without a pinned key or
// known_hosts file the login host's key is pinned in the spec. Nothing is installed.
func (b *Backend) Attach(ctx context.Context, s *compute.Spec) (*compute.NodeInfo, error) {
	if s.Slurm == nil {
		return nil, errors.New("not a slurm target")
	}
	t := &target{name: s.Name, spec: *s.Slurm, r: &remote.Local{}}
	if l := s.Slurm.Login; l != nil {
		cfg := remote.ConfigFor(*l)
		conn, err := remote.Dial(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("login host: %w", err)
		}
		defer conn.Close()
		t.r = conn
		out, err := remote.Output(ctx, conn, "uname -m")
		if err != nil {
			return nil, fmt.Errorf("login host: %w", err)
		}
		if err := remote.CheckArch(string(out), runtime.GOARCH); err != nil {
			return nil, fmt.Errorf("login host: %w", err)
		}
		if cfg.HostKey.TrustOnFirstUse {
			s.Slurm.Login.HostKey = conn.HostKey()
		}
	}
	if _, err := t.output(ctx, "sinfo", "--version"); err != nil {
		return nil, fmt.Errorf("slurm commands do not run: %w", err)
	}
	out, err := t.output(ctx, "sinfo", "--noheader", "--format=%R")
	if err != nil {
		return nil, fmt.Errorf("slurm does not answer: %w", err)
	}
	if p, parts := t.spec.Partition, strings.Fields(out); p != "" && !slices.Contains(parts, p) {
		return nil, fmt.Errorf("partition %s does not exist (the cluster has %s)", p, strings.Join(parts, ", "))
	}
	return describe(ctx, t)
}

func describe(ctx context.Context, t *target) (*compute.NodeInfo, error) {
	ver, err := t.output(ctx, "sinfo", "--version")
	if err != nil {
		return nil, err
	}
	args := []string{"sinfo", "--noheader", "--Node", "--format=" + slurm.SinfoFormat}
	part := "the default partition's"
	if p := t.spec.Partition; p != "" {
		args = append(args, "--partition="+p)
		part = "partition " + p
	}
	out, err := t.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	nodes, err := slurm.ParseSinfo(out)
	if err != nil {
		return nil, err
	}
	info := &compute.NodeInfo{OS: strings.TrimSpace(ver) + ", " + part + " nodes"}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name+" "+n.State)
		info.Cores += n.CPUs
		info.MemoryBytes += n.MemoryMB << 20
		for i := 0; i < n.GPUs(); i++ {
			info.GPUs = append(info.GPUs, compute.GPU{Index: len(info.GPUs), Name: n.Name + " " + n.Gres})
		}
	}
	info.Hostname = strings.Join(names, ", ")
	if len(nodes) == 0 {
		info.Hostname = "(no nodes)"
	}
	return info, nil
}
