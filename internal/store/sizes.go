package store

import (
	"context"
	"fmt"
	"time"

	"github.com/hangar-ml/hangar/internal/sizes"
)

// CreateSize stores a workspace size; a name taken (in any case) is ErrExists.
func (s *Cluster) CreateSize(ctx context.Context, z sizes.Size, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `
		INSERT INTO sizes (name, cores, memory_bytes, gpus, gpu_model, price_per_hour, family, isolated, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		z.Name, z.Cores, z.MemoryBytes, z.GPUs, z.GPUModel, z.PricePerHour, z.Family, z.Isolated, nanos(now))
	if err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("size %s: %w", z.Name, ErrExists)
		}
		return fmt.Errorf("create size %s: %w", z.Name, err)
	}
	return nil
}

// Sizes lists the workspace's own sizes by name.
func (s *Cluster) Sizes(ctx context.Context) ([]sizes.Size, error) {
	out, err := queryAll(ctx, s.db, scanSize, `
		SELECT name, cores, memory_bytes, gpus, gpu_model, price_per_hour, family, isolated FROM sizes ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list sizes: %w", err)
	}
	return out, nil
}

func scanSize(sc scanner) (z sizes.Size, err error) {
	err = sc.Scan(&z.Name, &z.Cores, &z.MemoryBytes, &z.GPUs, &z.GPUModel, &z.PricePerHour, &z.Family, &z.Isolated)
	z.Source = sizes.SourceWorkspace
	return z, err
}

// DeleteSize removes a workspace size (name in any case).
func (s *Cluster) DeleteSize(ctx context.Context, name string) error {
	return execOne(ctx, s.db, "delete size "+name, "size "+name, `DELETE FROM sizes WHERE name = ?`, name)
}
