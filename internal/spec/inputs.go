package spec

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/datastore"
	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/pattern"
)

var (
	literalTypes = []string{job.InputString, job.InputInteger, job.InputNumber, job.InputBoolean}
	dataTypes    = []string{job.URIFolder, job.URIFile, job.MLTable, job.MLflowModel, job.CustomModel, job.TritonModel}
	inputTypes   = append(append([]string(nil), literalTypes...), dataTypes...)

	ioName = pattern.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// reservedNames clash with environment variables the runtime sets (SPEC.md §0.3).
	reservedNames = []string{"path", "ld_library_path", "user", "logname", "home", "pwd", "shell"}
)

// Modes allowed per data type and direction (SPEC.md §3.3).
var (
	inputModes = map[string][]string{
		job.URIFolder: {"ro_mount", "download", "direct"},
		job.URIFile:   {"ro_mount", "download", "direct"},
		job.MLTable:   {"ro_mount", "download", "direct", "eval_mount", "eval_download"},
	}
	outputModes = map[string][]string{
		job.URIFolder: {"rw_mount", "upload"},
		job.URIFile:   {"rw_mount", "upload"},
		job.MLTable:   {"rw_mount", "upload", "direct"},
	}
	allModes   = []string{"ro_mount", "rw_mount", "download", "upload", "direct", "eval_mount", "eval_download", "mount"}
	modelModes = []string{"ro_mount", "download", "direct"}
	modelOuts  = []string{"rw_mount", "upload", "direct"}
)

func isLiteralType(t string) bool {
	return matchEnum(t, literalTypes) != "" && t != ""
}

// checkName reports an input or output name that is not identifier-like or is reserved.
func (d *jobDecoder) checkName(k *yaml.Node, path string) {
	switch name := k.Value; {
	case !ioName.MatchString(name):
		d.errorf(k, path, "name %s must start with a letter or _ and hold only letters, digits and _", quote(name))
	case matchReserved(name):
		d.errorf(k, path, "name %s is reserved (reserved: %s)", quote(name), strings.Join(reservedNames, ", "))
	}
}

func matchReserved(name string) bool {
	for _, r := range reservedNames {
		if strings.EqualFold(name, r) {
			return true
		}
	}
	return false
}

// inputs decodes `inputs:`.
func (d *jobDecoder) inputs(n *yaml.Node, path string) map[string]job.Input {
	return declared(d.decoder, n, path, d.input)
}

// declared decodes a mapping of declared names (inputs, outputs): each name is checked
// (checkName), then its value decoded by one, which says whether it is kept.
func declared[T any](d *decoder, n *yaml.Node, path string, one func(v *yaml.Node, path string) (T, bool)) map[string]T {
	out := map[string]T{}
	for _, p := range d.entries(n, path) {
		ip := join(path, p.key.Value)
		d.jobs.checkName(p.key, ip)
		if v, ok := one(resolve(p.value), ip); ok {
			out[p.key.Value] = v
		}
	}
	return out
}

// input decodes one input: a scalar literal, or an object for a typed literal or data.
func (d *jobDecoder) input(n *yaml.Node, path string) (job.Input, bool) {
	switch {
	case isNull(n):
		d.expected(n, path, "a value or an input object")
		return job.Input{}, false
	case n.Kind == yaml.ScalarNode:
		return job.Input{Type: scalarType(n), Value: n.Value}, true
	case n.Kind != yaml.MappingNode:
		d.expected(n, path, "a value or an input object")
		return job.Input{}, false
	}
	typ := job.URIFolder
	if t := lookup(n, "type"); t != nil && !isNull(t) {
		switch {
		case d.legacyPath(t, join(path, "type")):
			typ = d.pathType(lookup(n, "path"))
		default:
			if typ = d.enum(t, join(path, "type"), inputTypes...); typ == "" {
				return job.Input{}, false
			}
		}
	}
	if isLiteralType(typ) {
		return d.literalInput(n, path, typ)
	}
	return d.dataInput(n, path, typ)
}

// legacyPath reports a type node that says `path`, the data type of Azure's first component
// schema (sdk-2-0, still in its examples): a file or a folder, which the given path decides.
func (d *jobDecoder) legacyPath(t *yaml.Node, path string) bool {
	if t.Kind != yaml.ScalarNode || !strings.EqualFold(strings.TrimSpace(t.Value), "path") {
		return false
	}
	d.warnf(t, path, "the legacy type path is read as uri_folder, or uri_file when the path is a file")
	return true
}

// pathType is the type a legacy `type: path` input takes from its path (p, nil when none):
// uri_file for a local file or a URI naming a file (its last part has an extension), else
// uri_folder.
func (d *jobDecoder) pathType(p *yaml.Node) string {
	if p = resolve(p); p == nil || p.Kind != yaml.ScalarNode || isNull(p) {
		return job.URIFolder
	}
	v := strings.TrimSpace(p.Value)
	if isURI(v) {
		if last := v[strings.LastIndex(v, "/")+1:]; last != "" && strings.Contains(last, ".") && !strings.Contains(v, "${{") {
			return job.URIFile
		}
		return job.URIFolder
	}
	if info, err := os.Stat(d.abs(localPath(v))); err == nil && info.Mode().IsRegular() {
		return job.URIFile
	}
	return job.URIFolder
}

// scalarType is a literal's type from its YAML tag.
func scalarType(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!int":
		return job.InputInteger
	case "!!float":
		return job.InputNumber
	case "!!bool":
		return job.InputBoolean
	}
	return job.InputString
}

// literalInput decodes {type: string|integer|number|boolean, default|value, ...}.
func (d *jobDecoder) literalInput(n *yaml.Node, path, typ string) (job.Input, bool) {
	in := job.Input{Type: typ}
	errs := len(d.errs)
	got := d.mapping(n, path, fields{
		"type": nil, "default": nil, "value": nil, "min": nil, "max": nil, "enum": nil,
		"optional":    func(v *yaml.Node, p string) { in.Optional, _ = d.boolean(v, p) },
		"description": func(v *yaml.Node, p string) { in.Description = d.str(v, p) },
	})
	var vn *yaml.Node
	vp := ""
	for _, key := range []string{"default", "value"} { // value wins
		if v := got[key]; v != nil {
			if text, ok := d.literal(v, join(path, key), typ); ok {
				in.Value, vn, vp = text, v, join(path, key)
			}
		}
	}
	switch {
	case vn != nil:
		d.literalBounds(got, path, typ, vn, vp, in.Value)
	case !in.Optional && got["default"] == nil && got["value"] == nil:
		d.errorf(n, path, "default or value required (or optional: true)")
	}
	return in, len(d.errs) == errs
}

// literal checks a literal value against its declared type and returns its text.
func (d *jobDecoder) literal(v *yaml.Node, path, typ string) (string, bool) {
	switch typ {
	case job.InputInteger:
		_, ok := d.integer(v, path)
		return v.Value, ok
	case job.InputNumber:
		_, ok := d.number(v, path)
		return v.Value, ok
	case job.InputBoolean:
		_, ok := d.boolean(v, path)
		return v.Value, ok
	}
	s, ok := d.scalar(v, path, "a string")
	if !ok {
		return "", false
	}
	return s.Value, true
}

// literalBounds checks min, max and enum, and the value against them.
func (d *jobDecoder) literalBounds(got map[string]*yaml.Node, path, typ string, vn *yaml.Node, vp, value string) {
	numeric := typ == job.InputInteger || typ == job.InputNumber
	val, _ := strconv.ParseFloat(value, 64)
	if numeric {
		var x float64
		_ = vn.Decode(&x)
		val = x
	}
	for _, key := range []string{"min", "max"} {
		b := got[key]
		if b == nil {
			continue
		}
		if !numeric {
			d.errorf(b, join(path, key), "only allowed for integer and number inputs")
			continue
		}
		limit, ok := d.number(b, join(path, key))
		switch {
		case !ok:
		case key == "min" && val < limit:
			d.errorf(vn, vp, "%s is below min %s", value, b.Value)
		case key == "max" && val > limit:
			d.errorf(vn, vp, "%s is above max %s", value, b.Value)
		}
	}
	if e := got["enum"]; e != nil {
		d.checkEnum(e, join(path, "enum"), typ, vn, vp, value)
	}
}

// checkEnum checks a literal's value against its enum list.
func (d *jobDecoder) checkEnum(e *yaml.Node, path, typ string, vn *yaml.Node, vp, value string) {
	if e.Kind != yaml.SequenceNode {
		d.expected(e, path, "a list")
		return
	}
	var allowed []string
	for i, c := range e.Content {
		text, ok := d.literal(resolve(c), fmt.Sprintf("%s[%d]", path, i), typ)
		if !ok {
			return
		}
		if text == value || sameNumber(typ, text, value) {
			return
		}
		allowed = append(allowed, text)
	}
	d.errorf(vn, vp, "%s is not one of the enum values (%s)", quote(value), strings.Join(allowed, ", "))
}

func sameNumber(typ, a, b string) bool {
	if typ != job.InputInteger && typ != job.InputNumber {
		return false
	}
	var x, y float64
	return yaml.Unmarshal([]byte(a), &x) == nil && yaml.Unmarshal([]byte(b), &y) == nil && x == y
}

// dataInput decodes {type: uri_folder|..., path, mode, datastore, description}.
func (d *jobDecoder) dataInput(n *yaml.Node, path, typ string) (job.Input, bool) {
	in := job.Input{Type: typ, Mode: "ro_mount"}
	errs := len(d.errs)
	got := d.mapping(n, path, fields{
		"type":        nil,
		"path":        func(v *yaml.Node, p string) { in.Path = d.dataPath(v, p, typ) },
		"mode":        func(v *yaml.Node, p string) { in.Mode = d.mode(v, p, typ, "input", inputModes, modelModes) },
		"datastore":   func(v *yaml.Node, p string) { in.Datastore = d.str(v, p) },
		"description": func(v *yaml.Node, p string) { in.Description = d.str(v, p) },
		"optional":    func(v *yaml.Node, p string) { in.Optional, _ = d.boolean(v, p) },
	})
	if got["path"] == nil && !in.Optional {
		d.required(n, join(path, "path"))
	}
	return in, len(d.errs) == errs
}

// mode decodes a data mode and checks it against the type's allowed modes.
func (d *jobDecoder) mode(v *yaml.Node, path, typ, dir string, byType map[string][]string, other []string) string {
	allowed, ok := byType[typ]
	if !ok {
		allowed = other
	}
	m := matchEnum(v.Value, allModes)
	if m == "mount" && dir == "output" {
		m = "rw_mount"
	}
	if v.Kind != yaml.ScalarNode || m == "" {
		d.expected(v, path, "one of "+strings.Join(allowed, ", "))
		return ""
	}
	for _, a := range allowed {
		if a == m {
			return m
		}
	}
	d.errorf(v, path, "mode %s is not allowed for a %s %s (allowed: %s)", m, typ, dir, strings.Join(allowed, ", "))
	return ""
}

// dataPath decodes a data input's path: URIs are kept as is; local paths are resolved,
// made absolute and must exist with the right kind (file or directory).
func (d *jobDecoder) dataPath(v *yaml.Node, path, typ string) string {
	s := d.str(v, path)
	switch {
	case s == "":
		d.expected(v, path, "a path or URI")
		return ""
	case isURI(s):
		return s
	}
	p, info, ok := d.stat(v, path, s)
	switch {
	case !ok:
		return ""
	case typ == job.URIFile && info.IsDir():
		d.errorf(v, path, "%s is a directory; uri_file needs a file (use type: uri_folder)", s)
	case typ == job.URIFolder && !info.IsDir():
		d.errorf(v, path, "%s is a file; uri_folder needs a directory (use type: uri_file)", s)
	}
	return p
}

// outputs decodes `outputs:`.
func (d *jobDecoder) outputs(n *yaml.Node, path string) map[string]job.Output {
	return declared(d.decoder, n, path, func(v *yaml.Node, op string) (job.Output, bool) { return d.output(v, op), true })
}

var outputPathExprs = pattern.New(`\$\{\{\s*([^}]*?)\s*\}\}`)

// output decodes one output; an empty value means a uri_folder in rw_mount mode.
func (d *jobDecoder) output(n *yaml.Node, path string) job.Output {
	o := job.Output{Type: job.URIFolder, Mode: "rw_mount"}
	if isNull(n) {
		return o
	}
	if n.Kind != yaml.MappingNode {
		d.expected(n, path, "an output object or nothing")
		return o
	}
	if t := lookup(n, "type"); t != nil && !isNull(t) && !d.legacyPath(t, join(path, "type")) {
		o.Type = d.enum(t, join(path, "type"), dataTypes...)
	}
	d.mapping(n, path, fields{
		"type":        nil,
		"mode":        func(v *yaml.Node, p string) { o.Mode = d.mode(v, p, o.Type, "output", outputModes, modelOuts) },
		"path":        func(v *yaml.Node, p string) { o.Path = d.outputPath(v, p) },
		"name":        func(v *yaml.Node, p string) { o.Name = d.str(v, p) },
		"version":     func(v *yaml.Node, p string) { o.Version = d.str(v, p) },
		"description": func(v *yaml.Node, p string) { o.Description = d.str(v, p) },
	})
	return o
}

// outputPath accepts only datastore URIs and object stores' own URIs (s3://, gs://, wasbs://,
// abfss://, https://<account>.blob.core.windows.net/...), which may use ${{name}},
// ${{output_name}} and ${{default_datastore}}.
func (d *jobDecoder) outputPath(v *yaml.Node, path string) string {
	s := d.str(v, path)
	onDatastore := strings.HasPrefix(strings.ToLower(s), "azureml://datastores/") && strings.Contains(s, "/paths/")
	if !onDatastore && !datastore.IsObjectURI(s) {
		d.expected(v, path, "an azureml://datastores/<datastore>/paths/<path> URI or an object store's URI (s3://, gs://, wasbs://, abfss://)")
		return ""
	}
	for _, m := range outputPathExprs.FindAllStringSubmatch(s, -1) {
		switch m[1] {
		case "name", "output_name", "default_datastore":
		default:
			d.errorf(v, path, "${{%s}} is not allowed here (use ${{name}}, ${{output_name}} or ${{default_datastore}})", m[1])
		}
	}
	return s
}
