package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/parallel"
	"github.com/hangar-ml/hangar/internal/serving/scoring"
)

// A parallel job (job.Spec.Parallel) is a command that runs Hangar's parallel driver: the
// supervisor writes the driver beside the run, hands it the job's settings and this node's place
// among the run's nodes, and takes the run's reason from the driver when it fails.

// parallelReasonFile is where the driver writes why the job failed, under the run's hangar/.
const parallelReasonFile = "parallel_reason.txt"

// prepareParallel writes the driver (HANGAR_PARALLEL_DRIVER) and sets its variables (an mltable
// input's MLTable file read into HANGAR_PARALLEL_TABLE, so that the driver needs no YAML); a batch
// deployment's job also gets AZUREML_MODEL_DIR (laid out as for a replica) and
// AZUREML_BI_OUTPUT_PATH.
func (s *Supervisor) prepareParallel(values, env map[string]string) error {
	p := s.spec.Spec.Parallel
	if p == nil {
		return nil
	}
	if p.ModelInput != "" {
		dir, err := s.inputs.modelDir(values["inputs."+p.ModelInput], p.ModelFolder)
		if err != nil {
			return fmt.Errorf("parallel: %w", err)
		}
		env["AZUREML_MODEL_DIR"] = dir
	}
	if p.BIOutput != "" {
		env["AZUREML_BI_OUTPUT_PATH"] = values["outputs."+p.BIOutput]
	}
	dir := filepath.Join(s.cfg.Dir, "hangar")
	path := filepath.Join(dir, parallel.FileName)
	if err := os.WriteFile(path, parallel.Driver(), 0o644); err != nil {
		return fmt.Errorf("parallel: write the driver: %w", err)
	}
	run := *p
	if p.MLflow {
		entry, err := writeMLflowBatch(dir, env)
		if err != nil {
			return fmt.Errorf("parallel: %w", err)
		}
		run.EntryScript = entry
	}
	settings, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("parallel: %w", err)
	}
	reason := filepath.Join(dir, parallelReasonFile)
	if err := os.Remove(reason); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("parallel: %w", err)
	}
	if in := s.spec.Spec.Inputs[p.InputData]; in.Type == job.MLTable {
		t, err := parallel.ReadMLTable(values["inputs."+p.InputData])
		if err != nil {
			return fmt.Errorf("parallel: input_data: %w", err)
		}
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("parallel: %w", err)
		}
		env["HANGAR_PARALLEL_TABLE"] = string(b)
	}
	env["HANGAR_PARALLEL_DRIVER"] = path
	env["HANGAR_PARALLEL_SETTINGS"] = string(settings)
	env["HANGAR_PARALLEL_REASON_FILE"] = reason
	env["HANGAR_PARALLEL_NODE_RANK"] = strconv.Itoa(s.spec.NodeRank)
	env["HANGAR_PARALLEL_NODE_COUNT"] = strconv.Itoa(max(len(s.spec.Nodes), 1))
	return nil
}

// writeMLflowBatch writes the built-in MLflow batch scorer and the MLflow scorer it imports
// (named in HANGAR_MLFLOW_SCORER) into dir, and returns the entry script's path: a no-code
// MLflow batch deployment's job has no code of its own.
func writeMLflowBatch(dir string, env map[string]string) (string, error) {
	scorer := filepath.Join(dir, scoring.MLflowFileName)
	if err := os.WriteFile(scorer, scoring.MLflowScorer(), 0o644); err != nil {
		return "", fmt.Errorf("write the MLflow scorer: %w", err)
	}
	entry := filepath.Join(dir, scoring.MLflowBatchFileName)
	if err := os.WriteFile(entry, scoring.MLflowBatch(), 0o644); err != nil {
		return "", fmt.Errorf("write the MLflow batch scorer: %w", err)
	}
	env[scoring.MLflowEnv] = scorer
	return entry, nil
}

// parallelResult gives a failed parallel job the driver's reason (the threshold exceeded and the
// last error) instead of the command's exit code.
func (s *Supervisor) parallelResult(res job.Result) job.Result {
	if s.spec.Spec.Parallel == nil || res.State != job.Failed {
		return res
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, "hangar", parallelReasonFile))
	if why := strings.TrimSpace(string(b)); err == nil && why != "" {
		const most = 2000
		if len(why) > most {
			why = why[:most] + "…"
		}
		res.Reason = why
	}
	return res
}
