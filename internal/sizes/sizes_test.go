package sizes

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/resources"
)

func TestBuiltinShapes(t *testing.T) {
	c := NewCatalog(Builtin())
	tests := []struct {
		name   string
		cores  int
		mem    int64
		gpus   int
		model  string
		family string
	}{
		{"Standard_DS3_v2", 4, 14 * resources.Gi, 0, "", "DSv2"},
		{"standard_d4s_v3", 4, 16 * resources.Gi, 0, "", "DSv3"},
		{"STANDARD_D8S_V3", 8, 32 * resources.Gi, 0, "", "DSv3"},
		{"Standard_D16s_v3", 16, 64 * resources.Gi, 0, "", "DSv3"},
		{"Standard_NC6s_v3", 6, 112 * resources.Gi, 1, "V100", "NCSv3"},
		{"Standard_NC24s_v3", 24, 448 * resources.Gi, 4, "V100", "NCSv3"},
		{"Standard_ND96asr_v4", 96, 900 * resources.Gi, 8, "A100 40GB", "NDASv4_A100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := c.Lookup(tt.name)
			if !ok {
				t.Fatalf("Lookup(%q) found nothing", tt.name)
			}
			got := [5]any{s.Cores, s.MemoryBytes, s.GPUs, s.GPUModel, s.Family}
			want := [5]any{tt.cores, tt.mem, tt.gpus, tt.model, tt.family}
			if got != want {
				t.Errorf("shape = %v, want %v", got, want)
			}
			if s.PricePerHour <= 0 || s.Source != SourceBuiltin {
				t.Errorf("price %v source %q", s.PricePerHour, s.Source)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestLocal(t *testing.T) {
	tests := []struct {
		name string
		m    Machine
		want []Size
	}{
		{"cpu only", Machine{Cores: 8, MemoryBytes: 32 * resources.Gi}, []Size{
			{Name: "local-quarter", Cores: 2, MemoryBytes: 8 * resources.Gi},
			{Name: "local-half", Cores: 4, MemoryBytes: 16 * resources.Gi},
			{Name: "local-full", Cores: 8, MemoryBytes: 32 * resources.Gi},
		}},
		{"tiny machine keeps one core", Machine{Cores: 2, MemoryBytes: 4 * resources.Gi}, []Size{
			{Name: "local-quarter", Cores: 1, MemoryBytes: 1 * resources.Gi},
			{Name: "local-half", Cores: 1, MemoryBytes: 2 * resources.Gi},
			{Name: "local-full", Cores: 2, MemoryBytes: 4 * resources.Gi},
		}},
		{"gpus", Machine{Cores: 16, MemoryBytes: 64 * resources.Gi, GPUs: 4, GPUModel: "H100"}, []Size{
			{Name: "local-quarter", Cores: 4, MemoryBytes: 16 * resources.Gi, GPUs: 1, GPUModel: "H100"},
			{Name: "local-half", Cores: 8, MemoryBytes: 32 * resources.Gi, GPUs: 2, GPUModel: "H100"},
			{Name: "local-full", Cores: 16, MemoryBytes: 64 * resources.Gi, GPUs: 4, GPUModel: "H100"},
			{Name: "local-gpu", Cores: 4, MemoryBytes: 16 * resources.Gi, GPUs: 1, GPUModel: "H100"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.want {
				tt.want[i].Family, tt.want[i].Source = "local", SourceMachine
			}
			if diff := cmp.Diff(tt.want, Local(tt.m)); diff != "" {
				t.Errorf("Local (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMachineOf(t *testing.T) {
	n := &compute.NodeInfo{Cores: 4, MemoryBytes: 8, GPUs: []compute.GPU{{Index: 0, Name: "T4"}, {Index: 1, Name: "T4"}}}
	if got, want := MachineOf(n), (Machine{Cores: 4, MemoryBytes: 8, GPUs: 2, GPUModel: "T4"}); got != want {
		t.Errorf("MachineOf = %+v, want %+v", got, want)
	}
	if got := MachineOf(nil); got.Cores != 1 {
		t.Errorf("MachineOf(nil) = %+v", got)
	}
}

func TestValidate(t *testing.T) {
	ok := Size{Name: "big-cpu", Cores: 64, MemoryBytes: 256 * resources.Gi, Family: "onprem"}
	tests := []struct {
		name   string
		change func(s *Size)
		want   string // substring of the error; "" = valid
	}{
		{"valid", func(s *Size) {}, ""},
		{"bad name", func(s *Size) { s.Name = "a b" }, "name:"},
		{"no cores", func(s *Size) { s.Cores = 0 }, "cores:"},
		{"no memory", func(s *Size) { s.MemoryBytes = 0 }, "memory:"},
		{"negative gpus", func(s *Size) { s.GPUs = -1 }, "gpus:"},
		{"model without gpus", func(s *Size) { s.GPUModel = "A100" }, "gpu_model:"},
		{"negative price", func(s *Size) { s.PricePerHour = -1 }, "price_per_hour:"},
		{"no family", func(s *Size) { s.Family = " " }, "family:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.change(&s)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

type fakeLister struct {
	sizes []Size
	err   error
}

func (f fakeLister) Sizes(context.Context) ([]Size, error) { return f.sizes, f.err }

func TestLoad(t *testing.T) {
	own := Size{Name: "onprem-a100", Cores: 32, MemoryBytes: 256 * resources.Gi, GPUs: 8, GPUModel: "A100", Family: "onprem"}
	c, err := Load(t.Context(), fakeLister{sizes: []Size{own}}, Machine{Cores: 4, MemoryBytes: 8 * resources.Gi})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := c.Lookup("OnPrem-A100")
	if !ok || got.Source != SourceWorkspace || got.GPUs != 8 {
		t.Errorf("Lookup(OnPrem-A100) = %+v, %v", got, ok)
	}
	if s, ok := c.Lookup("local-full"); !ok || s.Cores != 4 {
		t.Errorf("Lookup(local-full) = %+v, %v", s, ok)
	}
	list := c.List()
	if first, last := list[0], list[len(list)-1]; first.Source != SourceBuiltin || last.Name != own.Name {
		t.Errorf("List order: first %s (%s), last %s", first.Name, first.Source, last.Name)
	}
	if _, err := Load(t.Context(), fakeLister{err: errors.New("db gone")}, Machine{}); err == nil {
		t.Error("Load with a failing store succeeded")
	}
}

func TestReserved(t *testing.T) {
	for name, want := range map[string]bool{"standard_nc6s_v3": true, "local-foo": true, "onprem-a100": false} {
		if got := Reserved(name); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", name, got, want)
		}
	}
}
