package component

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/job"
)

func num(f float64) *float64 { return &f }

var decl = map[string]Input{
	"epochs": {Input: job.Input{Type: job.InputInteger, Value: "3"}, HasDefault: true, Min: num(1), Max: num(50)},
	"lr":     {Input: job.Input{Type: job.InputNumber}},
	"optim":  {Input: job.Input{Type: job.InputString, Value: "adam"}, HasDefault: true, Enum: []string{"adam", "sgd"}},
	"shuf":   {Input: job.Input{Type: job.InputBoolean, Optional: true}},
	"data":   {Input: job.Input{Type: job.URIFolder, Mode: "download"}},
}

// Bind checks each given value against its declaration and fills defaults; each problem names
// the input.
func TestBind(t *testing.T) {
	lit := func(typ, v string) job.Input { return job.Input{Type: typ, Value: v} }
	data := job.Input{Type: job.URIFolder, Path: "/d"}
	for _, tt := range []struct {
		name   string
		given  Given
		want   map[string]string // input → value or path ("" = no value)
		errors []string
	}{
		{"defaults and values", Given{Values: map[string]job.Input{"lr": lit(job.InputInteger, "1"), "data": data}},
			map[string]string{"epochs": "3", "lr": "1", "optim": "adam", "shuf": "", "data": "/d"}, nil},
		{"from a step and a parameter", Given{Values: map[string]job.Input{"lr": lit(job.InputNumber, "0.5")},
			From: map[string]job.StepRef{"data": {Step: "prep", Output: "o"}}, Params: map[string]string{"epochs": "n"}},
			map[string]string{"epochs": "", "lr": "0.5", "optim": "adam", "shuf": "", "data": ""}, nil},
		{"bad values", Given{Values: map[string]job.Input{"lr": lit(job.InputString, "fast"), "epochs": lit(job.InputNumber, "2.5"),
			"optim": lit(job.InputString, "lbfgs"), "shuf": lit(job.InputString, "maybe"), "data": lit(job.InputString, "/d")}}, nil,
			[]string{`inputs.data: expected uri_folder data (an input object with a path), got the string "/d"`,
				`inputs.epochs: expected an integer, got "2.5"`, `inputs.lr: expected a number, got "fast"`,
				`inputs.optim: "lbfgs" is not one of the enum values (adam, sgd)`, `inputs.shuf: expected true or false, got "maybe"`}},
		{"bounds", Given{Values: map[string]job.Input{"lr": lit(job.InputNumber, "1"), "data": data, "epochs": lit(job.InputInteger, "51")}}, nil,
			[]string{"inputs.epochs: 51 is above max 50"}},
		{"missing and unknown", Given{Values: map[string]job.Input{"nope": lit(job.InputInteger, "1")}}, nil,
			[]string{"inputs.nope: the component has no input nope (its inputs: data, epochs, lr, optim, shuf)",
				"inputs.data: required by the component (declared uri_folder, no default)",
				"inputs.lr: required by the component (declared number, no default)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := Bind(decl, tt.given)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if d := cmp.Diff(tt.errors, msgs); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if tt.want == nil {
				return
			}
			values := map[string]string{}
			for k, v := range got {
				values[k] = v.Value + v.Path
			}
			if d := cmp.Diff(tt.want, values); d != "" {
				t.Errorf("inputs (-want +got):\n%s", d)
			}
			if tt.name == "defaults and values" && (got["lr"].Type != job.InputNumber || got["data"].Mode != "ro_mount" && got["data"].Mode != "download") {
				t.Errorf("lr = %+v (want the declared type number), data = %+v", got["lr"], got["data"])
			}
		})
	}
}

// Inline names a pipeline component's steps <step>.<inner>, gives them what the outer step
// gives, and Follow sends readers of the component's outputs to the inner step that writes them.
func TestInlineAndFollow(t *testing.T) {
	inner := Spec{Name: "twice", Type: Pipeline,
		Inputs: map[string]Input{"d": {Input: job.Input{Type: job.URIFolder}}, "n": {Input: job.Input{Type: job.InputInteger, Value: "2"}, HasDefault: true}},
		Graph: &Graph{Steps: map[string]Step{
			"one": {PipelineStep: job.PipelineStep{Spec: job.Spec{Inputs: map[string]job.Input{"d": {Type: job.URIFolder}, "k": {Type: job.InputInteger}}}},
				Params: map[string]string{"d": "d", "k": "n"}, ComputeParam: "n"},
			"two": {PipelineStep: job.PipelineStep{From: map[string]job.StepRef{"x": {Step: "one", Output: "m"}}}},
		}, Outputs: map[string]job.StepRef{"model": {Step: "two", Output: "m"}}}}
	steps, outs, errs := Inline("fit", inner, Given{From: map[string]job.StepRef{"d": {Step: "prep", Output: "o"}}}, "pool")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	one := steps["fit.one"]
	if one.Group != "fit" || one.From["d"] != (job.StepRef{Step: "prep", Output: "o"}) || one.Spec.Inputs["k"].Value != "2" || one.Spec.Compute != "2" {
		t.Errorf("fit.one = %+v", one)
	}
	if got := steps["fit.two"]; got.From["x"] != (job.StepRef{Step: "fit.one", Output: "m"}) || got.Spec.Compute != "pool" {
		t.Errorf("fit.two = %+v", got)
	}
	all := map[string]Step{"use": {PipelineStep: job.PipelineStep{From: map[string]job.StepRef{"m": {Step: "fit", Output: "model"}, "z": {Step: "fit", Output: "nope"}}}}}
	pipeOuts := map[string]job.StepRef{"final": {Step: "fit", Output: "model"}}
	errs = Follow(all, pipeOuts, map[string]map[string]job.StepRef{"fit": outs})
	if all["use"].From["m"] != (job.StepRef{Step: "fit.two", Output: "m"}) || pipeOuts["final"] != (job.StepRef{Step: "fit.two", Output: "m"}) {
		t.Errorf("after Follow: use reads %+v, final is %+v; want fit.two.m", all["use"].From, pipeOuts["final"])
	}
	if got := fmt.Sprint(errs); !strings.Contains(got, "jobs.use.inputs.z: the pipeline step fit has no output nope (its outputs: model)") {
		t.Errorf("errors = %s", got)
	}
}
