package parallel

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MLTableFile is the file that describes an mltable input's folder.
const MLTableFile = "MLTable"

// Table is what the driver needs of an mltable input (Azure's MLTable file, the part Hangar
// reads): its data files in order and how to read their rows. The supervisor hands it to the
// driver as JSON ($HANGAR_PARALLEL_TABLE).
type Table struct {
	// Files are absolute paths: the paths' files, folders' files (sorted, sub-folders
	// included) and patterns' matches (sorted), in the order of paths.
	Files []string `json:"files"`
	// Format is "delimited" (read_delimited, the default) or "json_lines".
	Format    string `json:"format"`
	Delimiter string `json:"delimiter,omitempty"`
	// Header is all_files_same_headers (each file's first line), from_first_file (the first
	// file's only) or no_header (columns Column1, Column2, ...).
	Header string `json:"header,omitempty"`
	// Encoding is a Python codec name.
	Encoding string `json:"encoding"`
	// EmptyAsString keeps a delimited file's empty values as "" (read_delimited's
	// empty_as_string); by default they are None, as in Azure.
	EmptyAsString bool `json:"empty_as_string,omitempty"`
}

// encodings maps MLTable's encodings to Python's codecs; those whose newline is not the byte
// \n (utf16, utf32) are not among them, since the driver cuts files at newlines.
var encodings = map[string]string{"utf8": "utf-8", "utf8bom": "utf-8-sig", "ascii": "ascii",
	"latin1": "latin-1", "iso88591": "latin-1", "windows1252": "cp1252"}

var headers = []string{"all_files_same_headers", "from_first_file", "no_header"}

// ReadMLTable reads dir's MLTable file. Errors name the file and the field.
func ReadMLTable(dir string) (*Table, error) {
	file := filepath.Join(dir, MLTableFile)
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("an mltable input is a folder with an %s file: %w", MLTableFile, err)
	}
	t, err := parseMLTable(dir, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return t, nil
}

type mltableDoc struct {
	Paths           []map[string]any
	Transformations []yaml.Node
}

func parseMLTable(dir string, b []byte) (*Table, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	if len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("expected a mapping with paths and transformations")
	}
	var doc mltableDoc
	m := root.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		var err error
		switch k {
		case "$schema", "type":
		case "paths":
			err = v.Decode(&doc.Paths)
		case "transformations":
			err = v.Decode(&doc.Transformations)
		default:
			err = fmt.Errorf("not supported (Hangar reads paths and transformations)")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if len(doc.Paths) == 0 {
		return nil, fmt.Errorf("paths: required: a list of {file|folder|pattern: ...}")
	}
	t := &Table{Format: "delimited", Delimiter: ",", Header: "all_files_same_headers", Encoding: "utf-8"}
	for i, p := range doc.Paths {
		files, err := pathFiles(dir, p)
		if err != nil {
			return nil, fmt.Errorf("paths[%d].%w", i, err)
		}
		t.Files = append(t.Files, files...)
	}
	for i := range doc.Transformations {
		if err := t.transformation(&doc.Transformations[i], fmt.Sprintf("transformations[%d]", i)); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// pathFiles lists one paths entry's files: a file, a folder or a pattern, relative to dir.
func pathFiles(dir string, p map[string]any) ([]string, error) {
	if len(p) != 1 {
		return nil, fmt.Errorf("%s: expected one of file, folder or pattern", strings.Join(slices.Sorted(maps.Keys(p)), ", "))
	}
	for kind, v := range p {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: expected a path, got %v", kind, v)
		}
		rel := path.Clean(strings.TrimPrefix(s, "./"))
		if strings.Contains(s, "://") || path.IsAbs(s) || rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("%s: %q is not a path inside the mltable's folder", kind, s)
		}
		switch kind {
		case "file":
			f := filepath.Join(dir, filepath.FromSlash(rel))
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
				return nil, fmt.Errorf("file: %q is not a file in the mltable's folder", s)
			}
			return []string{f}, nil
		case "folder":
			return walkFiles(dir, rel, nil)
		case "pattern":
			re, err := globRegexp(rel)
			if err != nil {
				return nil, fmt.Errorf("pattern: %q: %w", s, err)
			}
			return walkFiles(dir, ".", re)
		default:
			return nil, fmt.Errorf("%s: expected one of file, folder or pattern", kind)
		}
	}
	return nil, nil
}

// walkFiles lists the files under dir/rel (sorted), those matching re when it is set; the
// MLTable file itself is not data.
func walkFiles(dir, rel string, re *regexp.Regexp) ([]string, error) {
	root := filepath.Join(dir, filepath.FromSlash(rel))
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		r = filepath.ToSlash(r)
		if e.IsDir() || r == MLTableFile || (re != nil && !re.MatchString(r)) {
			return nil
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		what := "folder"
		if re != nil {
			what = "pattern"
		}
		return nil, fmt.Errorf("%s: %q: %w", what, rel, err)
	}
	return out, nil
}

// globRegexp turns a glob (*, ?, ** across folders) into an anchored regexp.
func globRegexp(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// transformation applies one transformations entry: read_delimited or read_json_lines.
func (t *Table) transformation(n *yaml.Node, at string) error {
	if n.Kind == yaml.ScalarNode {
		return fmt.Errorf("%s: %s is not supported (Hangar reads read_delimited and read_json_lines)", at, n.Value)
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return fmt.Errorf("%s: expected one transformation, like read_delimited: {...}", at)
	}
	name, body := n.Content[0].Value, n.Content[1]
	var opts struct {
		Delimiter     string `yaml:"delimiter"`
		Header        string `yaml:"header"`
		Encoding      string `yaml:"encoding"`
		EmptyAsString bool   `yaml:"empty_as_string"`
	}
	switch name {
	case "read_delimited", "read_json_lines":
	default:
		return fmt.Errorf("%s: %s is not supported (Hangar reads read_delimited and read_json_lines)", at, name)
	}
	at += "." + name
	if body.Kind == yaml.MappingNode {
		for i := 0; i < len(body.Content); i += 2 {
			k := body.Content[i].Value
			allowed := []string{"encoding"}
			if name == "read_delimited" {
				allowed = append(allowed, "delimiter", "header", "empty_as_string")
			}
			if !slices.Contains(allowed, k) {
				return fmt.Errorf("%s.%s: not supported (Hangar reads %s)", at, k, strings.Join(allowed, ", "))
			}
		}
		if err := body.Decode(&opts); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	}
	t.Format = map[string]string{"read_delimited": "delimited", "read_json_lines": "json_lines"}[name]
	t.EmptyAsString = opts.EmptyAsString
	if opts.Delimiter != "" {
		t.Delimiter = opts.Delimiter
	}
	if opts.Header != "" {
		if !slices.Contains(headers, opts.Header) {
			return fmt.Errorf("%s.header: expected one of %s, got %q", at, strings.Join(headers, ", "), opts.Header)
		}
		t.Header = opts.Header
	}
	if opts.Encoding != "" {
		codec, ok := encodings[opts.Encoding]
		if !ok {
			return fmt.Errorf("%s.encoding: expected one of %s, got %q", at, strings.Join(slices.Sorted(maps.Keys(encodings)), ", "), opts.Encoding)
		}
		t.Encoding = codec
	}
	if len(t.Delimiter) != 1 {
		return fmt.Errorf("%s.delimiter: expected one character, got %q", at, t.Delimiter)
	}
	return nil
}
