package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/asset"
	"github.com/hangar-ml/hangar/internal/compute"
	"github.com/hangar-ml/hangar/internal/serving"
)

func sampleDeployment() serving.Deployment {
	return serving.Deployment{Name: "blue", Endpoint: "ep-1", InstanceCount: 1, InstanceType: "Standard_DS3_v2",
		Meta: asset.Meta{Tags: map[string]string{"team": "ml"}}, EnvironmentVariables: map[string]string{"A": "1"},
		Model: serving.ModelRef{Ref: "iris:1"}, ScoringScript: "score.py", CodeSnapshot: "abc",
		Scale: serving.ScaleSettings{Type: "default"}, Request: serving.RequestSettings{RequestTimeoutMS: 5000}}
}

func TestApplyStoredSetsDeployment(t *testing.T) {
	tests := []struct {
		name string
		sets []string
		mod  func(d *serving.Deployment)
	}{
		{"integer", []string{"instance_count=2"}, func(d *serving.Deployment) { d.InstanceCount = 2 }},
		{"string", []string{"instance_type=Standard_F2s_v2"}, func(d *serving.Deployment) { d.InstanceType = "Standard_F2s_v2" }},
		{"a number where a string is", []string{"description=42"}, func(d *serving.Deployment) { d.Description = "42" }},
		{"adds a key to an existing map", []string{"tags.stage=prod"}, func(d *serving.Deployment) { d.Tags["stage"] = "prod" }},
		{"replaces a map's key", []string{"environment_variables.A=2"}, func(d *serving.Deployment) { d.EnvironmentVariables["A"] = "2" }},
		{"adds to a map that was empty", []string{"properties.owner=rita"}, func(d *serving.Deployment) { d.Properties = map[string]string{"owner": "rita"} }},
		{"nested field", []string{"request_settings.request_timeout_ms=9000"}, func(d *serving.Deployment) { d.Request.RequestTimeoutMS = 9000 }},
		{"Azure's name for a stored one", []string{"code_configuration.scoring_script=other.py"}, func(d *serving.Deployment) { d.ScoringScript = "other.py" }},
		{"kept-as-given field", []string{"app_insights_enabled=true"}, func(d *serving.Deployment) { d.Extra = map[string]any{"app_insights_enabled": true} }},
		{"several, in order", []string{"instance_count=2", "instance_count=3"}, func(d *serving.Deployment) { d.InstanceCount = 3 }},
		{"a flow mapping", []string{"scale_settings={type: target_utilization, min_instances: 1, max_instances: 4}"}, func(d *serving.Deployment) {
			d.Scale = serving.ScaleSettings{Type: "target_utilization", MinInstances: 1, MaxInstances: 4}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := sampleDeployment(), sampleDeployment()
			tt.mod(&want)
			if err := applyStoredSets(&got, tt.sets, onlineDeploymentKind); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("--set %v (-want +got):\n%s", tt.sets, diff)
			}
		})
	}
}

func TestApplyStoredSetsErrors(t *testing.T) {
	tests := []struct {
		name string
		set  string
		want string
	}{
		{"not key=value", "instance_count", "--set instance_count: expected key.path=value"},
		{"empty path", "=2", "--set =2: expected key.path=value"},
		{"text for a number", "instance_count=two", `--set instance_count: expected a number, got "two"`},
		{"number for a boolean", "liveness_probe.period=yes", `--set liveness_probe.period: expected a number, got "yes"`},
		{"unknown field", "instance_cnt=2", `--set instance_cnt: a stored online deployment has no field "instance_cnt"`},
		{"scalar for a mapping", "scale_settings=5", "--set scale_settings: is a mapping (with min_instances, type)"},
		{"index of a non-list", "tags[0]=x", "--set tags.[0]: tags is not a list"},
		{"model needs the file", "model=azureml:iris:2", "--set model: the model changing it uploads files: give the file"},
		{"code needs the file", "code_configuration.code=./src", "--set code_configuration.code: the code changing it uploads files"},
		{"wrong type in a new key", "scale_settings.min_instances=many", `--set scale_settings.min_instances: expected a number, got "many"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := sampleDeployment()
			err := applyStoredSets(&d, []string{tt.set}, onlineDeploymentKind)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if diff := cmp.Diff(sampleDeployment(), d); diff != "" {
				t.Errorf("a refused --set changed the deployment:\n%s", diff)
			}
		})
	}
}

func TestApplyStoredSetsOtherKinds(t *testing.T) {
	be := serving.BatchEndpoint{Name: "batch-1", AuthMode: "aad_token"}
	if err := applyStoredSets(&be, []string{"defaults.deployment_name=classifier"}, batchEndpointKind); err != nil || be.DefaultDeployment != "classifier" {
		t.Errorf("batch endpoint: %+v, %v; want default_deployment classifier", be, err)
	}
	bd := serving.BatchDeployment{Name: "d1", Settings: serving.DefaultBatchSettings()}
	if err := applyStoredSets(&bd, []string{"mini_batch_size=20", "retry_settings.max_retries=5", "resources.instance_count=2"}, batchDeploymentKind); err != nil ||
		bd.Settings.MiniBatchSize != 20 || bd.Settings.MaxRetries != 5 || bd.InstanceCount != 2 {
		t.Errorf("batch deployment: %+v, %v", bd, err)
	}
	ep := serving.Endpoint{Name: "ep-1", AuthMode: "key", Traffic: map[string]int{"blue": 100}}
	if err := applyStoredSets(&ep, []string{"traffic.green=0", "public_network_access=disabled"}, onlineEndpointKind); err != nil ||
		!cmp.Equal(ep.Traffic, map[string]int{"blue": 100, "green": 0}) || ep.Extra["public_network_access"] != "disabled" {
		t.Errorf("online endpoint: %+v, %v", ep, err)
	}
	cs := compute.Spec{Name: "cpu", Type: "amlcompute", Cluster: &compute.ClusterSpec{MaxInstances: 2}}
	if err := applyStoredSets(&cs, []string{"max_instances=8", "description=more"}, computeKind("cluster")); err != nil ||
		cs.Cluster.MaxInstances != 8 || cs.Description != "more" {
		t.Errorf("compute: %+v %+v, %v", cs, cs.Cluster, err)
	}
	if err := applyStoredSets(&cs, []string{"type=computeinstance"}, computeKind("cluster")); err == nil {
		t.Error("compute: --set type was taken; want it refused")
	}
}
