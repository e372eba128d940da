package envs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/job"
)

// Kind says how a run's dependencies are provided.
type Kind string

// The environment kinds.
const (
	Host    Kind = "host"    // the node's environment as it is
	User    Kind = "user"    // the user's own interpreter (interpreter_path / user_managed_dependencies)
	Managed Kind = "managed" // a Python environment built from a conda file or requirements, cached
)

// Spec is the normalized description of an environment: everything that changes what gets built.
// Two specs with the same Key build the same environment.
type Spec struct {
	Kind Kind `json:"kind"`
	// Python is the interpreter constraint from the conda file (`python=3.11`), "" for any.
	Python string `json:"python,omitempty"`
	// Pip lists pip requirement lines, in order.
	Pip []string `json:"pip,omitempty"`
	// Conda lists conda dependencies other than python and pip; Channels their channels.
	Conda    []string `json:"conda,omitempty"`
	Channels []string `json:"channels,omitempty"`
	// Interpreter is the user's interpreter (User kind).
	Interpreter string `json:"interpreter,omitempty"`
	// Image is the container image the environment lives in ("" = the host).
	Image string `json:"image,omitempty"`
}

// condaFile is the part of a conda environment file Hangar reads.
type condaFile struct {
	Name         string            `yaml:"name"`
	Channels     []string          `yaml:"channels"`
	Dependencies []yaml.Node       `yaml:"dependencies"`
	Prefix       string            `yaml:"prefix"`
	Variables    map[string]string `yaml:"variables"`
}

// FromEnvironment turns a job's environment into a Spec. A malformed conda file is an error that
// says what is wrong with which entry.
func FromEnvironment(e job.Environment) (Spec, error) {
	s := Spec{Kind: Host, Image: e.Image}
	switch {
	case e.InterpreterPath != "":
		s.Kind, s.Interpreter = User, e.InterpreterPath
		return s, nil
	case e.UserManagedDependencies:
		s.Kind = User
		return s, nil
	}
	if e.CondaSpec != "" {
		s.Kind = Managed
		if err := s.readConda(e.CondaSpec); err != nil {
			return s, fmt.Errorf("conda_file: %w", err)
		}
	}
	if e.RequirementsText != "" {
		s.Kind = Managed
		s.Pip = append(s.Pip, requirementLines(e.RequirementsText)...)
	}
	return s, nil
}

func (s *Spec) readConda(text string) error {
	var cf condaFile
	if err := yaml.Unmarshal([]byte(text), &cf); err != nil {
		return fmt.Errorf("malformed YAML: %w", err)
	}
	s.Channels = cf.Channels
	for i, n := range cf.Dependencies {
		switch n.Kind {
		case yaml.ScalarNode:
			s.addCondaDep(strings.TrimSpace(n.Value))
		case yaml.MappingNode:
			if err := s.addPipBlock(i, &n); err != nil {
				return err
			}
		default:
			return fmt.Errorf("dependencies[%d]: expected a package spec or {pip: [...]}", i)
		}
	}
	return nil
}

func (s *Spec) addCondaDep(dep string) {
	name := strings.FieldsFunc(dep, func(r rune) bool { return strings.ContainsRune("=<>!~ ", r) })
	if len(name) == 0 {
		return
	}
	switch strings.ToLower(name[0]) {
	case "python":
		s.Python = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(dep), name[0]))
		if s.Python == "" {
			s.Python = "*"
		}
	case "pip":
		// pip comes with every managed environment
	default:
		s.Conda = append(s.Conda, dep)
	}
}

func (s *Spec) addPipBlock(i int, n *yaml.Node) error {
	var m map[string][]string
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("dependencies[%d]: expected {pip: [requirement, ...]}: %w", i, err)
	}
	for k, reqs := range m {
		if k != "pip" {
			return fmt.Errorf("dependencies[%d]: unknown key %q (only pip: is understood)", i, k)
		}
		for _, r := range reqs {
			if r = strings.TrimSpace(r); r != "" {
				s.Pip = append(s.Pip, r)
			}
		}
	}
	return nil
}

// requirementLines returns the meaningful lines of a requirements file.
func requirementLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, " #"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Key is the cache key of the spec built with a given interpreter on a given platform.
func (s Spec) Key(platform string, py Interpreter) string {
	b, _ := json.Marshal(struct {
		Spec     Spec        `json:"spec"`
		Platform string      `json:"platform"`
		Python   Interpreter `json:"python"`
		Format   int         `json:"format"`
	}{s, platform, py, 1})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
