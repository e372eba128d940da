package curated

import (
	"strings"

	"github.com/hangar-ml/hangar/internal/job"
)

// SystemPython is the node's own Python, where Debian's (and Ubuntu's) python3-* packages are.
const SystemPython = "/usr/bin/python3"

// Defaults are the mappings Hangar ships for Azure's common CPU curated environments (an
// owner's mapping of the same name replaces one; removing it leaves the name unmapped). Where
// the node's distribution packages the library (Debian 12: python3-sklearn, python3-torch,
// python3-xgboost, with numpy, scipy, pandas and joblib), the node's own Python runs the job
// as it is: nothing is built or downloaded. TensorFlow, LightGBM and MLflow, which Debian does
// not package, are managed environments: pip installs them once per node into a cached
// virtual environment, from the index the node's pip is configured with.
func Defaults() []Mapping {
	system := func(name, packages string) Mapping {
		return Mapping{Name: name, Builtin: true, Environment: job.Environment{InterpreterPath: SystemPython},
			Description: "the node's Python, " + SystemPython + ", with its packages (apt-get install " + packages + ")"}
	}
	pip := func(name string, packages ...string) Mapping {
		return Mapping{Name: name, Builtin: true, Environment: job.Environment{RequirementsText: strings.Join(packages, "\n") + "\n"},
			Description: "a managed environment: pip installs " + strings.Join(packages, ", ") + " once per node, from the node's package index"}
	}
	return []Mapping{
		system("sklearn-*", "python3-sklearn python3-pandas"),
		system("*scikit-learn*", "python3-sklearn python3-pandas"),
		system("*pytorch*", "python3-torch: CPU only"),
		system("*xgboost*", "python3-xgboost python3-sklearn"),
		system("minimal-*", "python3"),
		pip("*tensorflow*", "tensorflow"),
		pip("*lightgbm*", "lightgbm", "scikit-learn", "pandas"),
		pip("*mlflow*", "mlflow"),
	}
}
