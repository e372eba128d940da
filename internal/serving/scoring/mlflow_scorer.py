"""Hangar's built-in scorer for no-code MLflow deployments (imported by Hangar's scoring server).

A deployment whose model is an MLflow model (an MLmodel file at the model folder's root) and
that gives no code_configuration is served by this module in place of a scoring script. It does
not import mlflow (there is none to install here): it reads MLmodel, loads the python_function
flavour's model with the loader its loader_module names, for the flavours whose library is in
the replica's environment:

- mlflow.sklearn: the sklearn flavour's pickled_model (python_function's model_path), read with
  pickle, or cloudpickle when serialization_format says so; predict_fn (default predict).
- mlflow.xgboost: the xgboost flavour's data file, loaded into its model_class.
- mlflow.lightgbm: the lightgbm flavour's data file (a Booster, or a pickled scikit-learn model).
- mlflow.pytorch: the pytorch flavour's whole-model pickle (torch.save), fed float tensors.

Requests are those of MLflow's scoring server (a JSON object with exactly one of
dataframe_split, dataframe_records, instances, inputs, and an optional params; or CSV with
text/csv), answered {"predictions": ...}, and Azure's ({"input_data": ..., "params"?}),
answered with the bare predictions. The MLmodel signature's inputs are enforced: a missing
column, or a value that cannot be read as its column's type, is a 400 that names the column.
Errors are MLflow's JSON, {"error_code", "message"}; a wrong content type is a 415 in text.

Pickles are code: this module runs only inside the replica (the run box), never in the server.
"""

import importlib
import importlib.metadata
import inspect
import io
import json
import os
import re
import sys
import traceback

MLMODEL = "MLmodel"
MLFLOW_KEYS = ("dataframe_split", "dataframe_records", "instances", "inputs")


class ScorerError(Exception):
    """The model cannot be served; the message says why (the replica's start fails)."""


class BadRequest(Exception):
    """The client's mistake: a 400 (or another status) in MLflow's error shape."""

    def __init__(self, message, code="BAD_REQUEST", status=400):
        super().__init__(message)
        self.code, self.status = code, status


def find_model(model_dir):
    """The folder holding MLmodel: MLFLOW_MODEL_FOLDER under model_dir when set (Azure's MLflow
    images' variable), else model_dir itself, or its only subfolder that has one."""
    folder = os.environ.get("MLFLOW_MODEL_FOLDER")
    if folder:
        path = os.path.join(model_dir, folder)
        if not os.path.isfile(os.path.join(path, MLMODEL)):
            raise ScorerError(f"no {MLMODEL} file in {path} (MLFLOW_MODEL_FOLDER={folder!r} under AZUREML_MODEL_DIR)")
        return path
    if os.path.isfile(os.path.join(model_dir, MLMODEL)):
        return model_dir
    found = [os.path.join(model_dir, d) for d in sorted(os.listdir(model_dir))
             if os.path.isfile(os.path.join(model_dir, d, MLMODEL))]
    if len(found) != 1:
        raise ScorerError(f"no {MLMODEL} file in {model_dir} (nor in exactly one folder under it): not an MLflow model")
    return found[0]


def read_yaml(path):
    try:
        import yaml
    except ImportError:
        raise ScorerError("reading MLmodel needs PyYAML in the replica's environment (Debian: python3-yaml)") from None
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


# --- loaders, by python_function's loader_module ---------------------------------------------

def load_pickle(path, serialization):
    with open(path, "rb") as f:
        if serialization == "cloudpickle":
            try:
                import cloudpickle
            except ImportError:
                raise ScorerError("the model was saved with cloudpickle, which the replica's environment lacks") from None
            return cloudpickle.load(f)
        return __import__("pickle").load(f)


def load_sklearn(path, flavors, pyfunc):
    sk = flavors.get("sklearn", {})
    fmt = sk.get("serialization_format", "pickle")  # mlflow.sklearn's default when loading
    if fmt not in ("pickle", "cloudpickle"):
        raise ScorerError(f"sklearn serialization_format {fmt!r} is not supported (pickle, cloudpickle)")
    need(["sklearn"], "mlflow.sklearn")
    # model_path since MLflow 1.10; data (the pickle itself) before
    file = pyfunc.get("model_path") or pyfunc.get("data") or sk.get("pickled_model", "model.pkl")
    model = load_pickle(os.path.join(path, file), fmt)
    fn = getattr(model, pyfunc.get("predict_fn") or "predict", None)
    if not callable(fn):
        raise ScorerError(f"the scikit-learn model has no {pyfunc.get('predict_fn') or 'predict'}() method")
    return fn


def load_xgboost(path, flavors, pyfunc):
    xgb = need(["xgboost"], "mlflow.xgboost")[0]
    conf = flavors.get("xgboost", {})
    file = os.path.join(path, pyfunc.get("data") or conf.get("data", "model.xgb"))
    module, _, cls = conf.get("model_class", "xgboost.core.Booster").rpartition(".")
    model = getattr(importlib.import_module(module), cls)()
    model.load_model(file)
    if isinstance(model, xgb.Booster):
        return lambda data: model.predict(xgb.DMatrix(data))
    return model.predict


def load_lightgbm(path, flavors, pyfunc):
    lgb = need(["lightgbm"], "mlflow.lightgbm")[0]
    file = os.path.join(path, pyfunc.get("data") or flavors.get("lightgbm", {}).get("data", "model.lgb"))
    if file.endswith(".pkl"):
        return load_pickle(file, "pickle").predict
    return lgb.Booster(model_file=file).predict


def load_pytorch(path, flavors, pyfunc):
    torch = need(["torch"], "mlflow.pytorch")[0]
    data = pyfunc.get("data") or flavors.get("pytorch", {}).get("model_data", "data")
    file = os.path.join(path, data)
    if os.path.isdir(file):
        file = os.path.join(file, "model.pth")
    try:
        model = torch.load(file, map_location="cpu", weights_only=False)
    except TypeError:  # a torch older than weights_only
        model = torch.load(file, map_location="cpu")
    model.eval()

    def predict(data):
        # As mlflow.pytorch's pyfunc: float32 tensors in; a DataFrame in gives a DataFrame out.
        import numpy as np
        import pandas as pd
        frame = isinstance(data, pd.DataFrame)
        with torch.no_grad():
            out = model(torch.as_tensor(np.asarray(data.values if frame else data, dtype="float32"))).numpy()
        return pd.DataFrame(out) if frame else out
    return predict


LOADERS = {"mlflow.sklearn": load_sklearn, "mlflow.xgboost": load_xgboost,
           "mlflow.lightgbm": load_lightgbm, "mlflow.pytorch": load_pytorch}


def need(modules, loader):
    out = []
    for m in modules:
        try:
            out.append(importlib.import_module(m))
        except ImportError as e:
            raise ScorerError(f"python_function's loader {loader} needs {m}, which the replica's environment lacks ({e}); "
                              "give the deployment an environment that has it") from None
    return out


# --- the signature ---------------------------------------------------------------------------

class Signature:
    """The MLmodel signature's inputs: named columns (ColSpec) or one tensor (TensorSpec)."""

    def __init__(self, spec):
        self.columns, self.tensor = [], None
        if not spec:
            return
        inputs = json.loads(spec) if isinstance(spec, str) else spec
        for s in inputs or []:
            if s.get("type") == "tensor":
                self.tensor = s.get("tensor-spec", {})
            else:
                self.columns.append(s)

    def named(self):
        return [c["name"] for c in self.columns if c.get("name")]

    def enforce(self, data):
        import numpy as np
        import pandas as pd
        if self.tensor is not None:
            return self.enforce_tensor(np.asarray(data.values if isinstance(data, pd.DataFrame) else data))
        if not self.columns:
            return data
        names = self.named()
        if isinstance(data, dict):
            data = pd.DataFrame({k: np.asarray(v).reshape(-1) for k, v in data.items()})
        if not isinstance(data, pd.DataFrame):
            arr = np.asarray(data)
            if arr.ndim == 1 and len(names) == 1:
                arr = arr.reshape(-1, 1)
            if arr.ndim != 2 or arr.shape[1] != len(self.columns):
                raise BadRequest(f"Failed to enforce schema: the model expects {len(self.columns)} columns {names}, "
                                 f"got an array of shape {list(arr.shape)}", "INVALID_PARAMETER_VALUE")
            data = pd.DataFrame(arr, columns=names or None)
        if names:
            required = [c["name"] for c in self.columns if c.get("name") and c.get("required", True)]
            missing = [n for n in required if n not in data.columns]
            if missing:
                raise BadRequest(f"Failed to enforce schema of data with schema {names}. Error: Model is missing inputs {missing}.",
                                 "INVALID_PARAMETER_VALUE")
            data = data[[n for n in names if n in data.columns]]
        out = data.copy()
        for i, c in enumerate(self.columns):
            col = c.get("name") or out.columns[i]
            if col in out.columns:
                out[col] = cast_column(out[col], col, c.get("type", ""))
        return out

    def enforce_tensor(self, arr):
        dtype, shape = self.tensor.get("dtype"), self.tensor.get("shape") or []
        if shape and arr.ndim != len(shape):
            raise BadRequest(f"Failed to enforce schema: the model expects a tensor of shape {shape}, got {list(arr.shape)}",
                             "INVALID_PARAMETER_VALUE")
        for want, got in zip(shape, arr.shape):
            if want != -1 and want != got:
                raise BadRequest(f"Failed to enforce schema: the model expects a tensor of shape {shape}, got {list(arr.shape)}",
                                 "INVALID_PARAMETER_VALUE")
        if dtype:
            try:
                arr = arr.astype(dtype)
            except (TypeError, ValueError) as e:
                raise BadRequest(f"Failed to enforce schema: the input cannot be read as {dtype}: {e}", "INVALID_PARAMETER_VALUE") from None
        return arr


def cast_column(series, name, typ):
    import numpy as np
    import pandas as pd

    def fail(why):
        raise BadRequest(f"Failed to enforce schema: column {name!r} must hold {typ} values: {why}", "INVALID_PARAMETER_VALUE")
    try:
        if typ in ("double", "float"):
            if series.map(lambda v: isinstance(v, (str, bytes, bool))).any():
                fail("got text or booleans")
            return series.astype("float64" if typ == "double" else "float32")
        if typ in ("long", "integer"):
            values = pd.to_numeric(series, errors="raise")
            if series.map(lambda v: isinstance(v, bool)).any() or (values.dropna() % 1 != 0).any():
                fail("got a value that is not a whole number")
            return values.astype("int64" if typ == "long" else "int32")
        if typ == "boolean":
            if not series.map(lambda v: isinstance(v, (bool, np.bool_))).all():
                fail("got a value that is not true or false")
            return series.astype(bool)
        if typ == "string":
            if not series.map(lambda v: isinstance(v, str)).all():
                fail("got a value that is not a string")
            return series
        if typ == "datetime":
            return pd.to_datetime(series)
    except BadRequest:
        raise
    except (TypeError, ValueError) as e:
        fail(str(e))
    return series


# --- requests and answers --------------------------------------------------------------------

def parse_json(body):
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"Invalid input. Ensure that input is a valid JSON formatted string. Error: '{e}'") from None
    if not isinstance(doc, dict):
        raise BadRequest("Invalid input. The input must be a JSON dictionary with exactly one of the input fields "
                         f"{{{', '.join(repr(k) for k in MLFLOW_KEYS)}}} (or Azure's 'input_data'). Received a {type(doc).__name__}.")
    params = doc.get("params")
    if params is not None and not isinstance(params, dict):
        raise BadRequest("Invalid input. 'params' must be a JSON dictionary.")
    return doc, params


def azure_input(value):
    """Azure's input_data: a list (a tensor), {columns, index, data} (a DataFrame) or named tensors."""
    import numpy as np
    import pandas as pd
    if isinstance(value, list):
        return np.asarray(value)
    if isinstance(value, dict):
        if {"columns", "index", "data"} <= value.keys():
            return split_frame(value, "input_data")
        return {k: np.asarray(v) for k, v in value.items()}
    raise BadRequest(f"Invalid input. 'input_data' must be a list or a dictionary, got {type(value).__name__}.")


def split_frame(value, key):
    import pandas as pd
    if not isinstance(value, dict):
        raise BadRequest(f"Invalid input. Dataframe split format must be a dictionary. Got {type(value).__name__}.")
    if "data" not in value or not value.keys() <= {"columns", "data", "index"}:
        raise BadRequest(f"Invalid input. {key}: Dataframe split format must have 'data' field and optionally 'columns' "
                         f"and 'index' fields. Got {sorted(value.keys())}.")
    try:
        return pd.DataFrame(data=value["data"], columns=value.get("columns"), index=value.get("index"))
    except (TypeError, ValueError) as e:
        raise BadRequest(f"Invalid input. {key}: {e}") from None


def mlflow_input(doc):
    import numpy as np
    import pandas as pd
    if "signature_name" in doc:
        raise BadRequest('"signature_name" parameter is currently not supported')
    keys = [k for k in MLFLOW_KEYS if k in doc]
    others = [k for k in doc if k not in MLFLOW_KEYS and k != "params"]
    if len(keys) != 1 or others:
        raise BadRequest("Invalid input. The input must be a JSON dictionary with exactly one of the input fields "
                         f"{{{', '.join(repr(k) for k in MLFLOW_KEYS)}}} and optionally 'params' (or Azure's 'input_data'). "
                         f"Received dictionary with input fields: {sorted(doc.keys())}.")
    key, value = keys[0], doc[keys[0]]
    if key == "dataframe_split":
        return split_frame(value, key)
    if key == "dataframe_records":
        if not isinstance(value, list):
            raise BadRequest(f"Invalid input. Dataframe records format must be a list of records. Got {type(value).__name__}.")
        try:
            return pd.DataFrame(data=value)
        except (TypeError, ValueError) as e:
            raise BadRequest(f"Invalid input. dataframe_records: {e}") from None
    if key == "instances":
        if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
            return pd.DataFrame(data=value)
        return np.asarray(value)
    if isinstance(value, dict):
        return {k: np.asarray(v) for k, v in value.items()}
    return np.asarray(value)


def jsonable(result):
    import numpy as np
    import pandas as pd
    if isinstance(result, pd.DataFrame):
        return json.loads(result.to_json(orient="records"))
    if isinstance(result, pd.Series):
        return json.loads(pd.DataFrame(result).to_json(orient="records"))
    if isinstance(result, np.ndarray):
        return result.tolist()
    if isinstance(result, np.generic):
        return result.item()
    return result


def error(e):
    return e.status, json.dumps({"error_code": e.code, "message": str(e)}).encode("utf-8"), "application/json"


def text(status, message):
    return status, message.encode("utf-8"), "text/plain; charset=utf-8"


class Scorer:
    """The scoring server's script for a no-code MLflow deployment."""

    def __init__(self, model_dir):
        self.model_dir = model_dir
        self.path = None
        self.predict = None

    def init(self):
        self.path = find_model(self.model_dir)
        meta = read_yaml(os.path.join(self.path, MLMODEL))
        flavors = meta.get("flavors") or {}
        pyfunc = flavors.get("python_function")
        if not pyfunc:
            raise ScorerError(f"{MLMODEL} has no python_function flavour (flavours: {', '.join(flavors) or 'none'}); "
                              "only python_function models are served without a scoring script: give code_configuration")
        loader = pyfunc.get("loader_module", "")
        load = LOADERS.get(loader)
        if load is None:
            raise ScorerError(f"python_function's loader_module {loader!r} is not one Hangar's built-in scorer has "
                              f"({', '.join(sorted(LOADERS))}); give code_configuration with a scoring script")
        self.signature = Signature((meta.get("signature") or {}).get("inputs"))
        self.version = str(meta.get("mlflow_version") or "unknown")
        warn_requirements(self.path)
        self.predict = load(self.path, flavors, pyfunc)
        self.takes_params = "params" in inspect.signature(self.predict).parameters if callable(self.predict) else False
        print(f"mlflow model {self.path}: loader {loader}, signature "
              f"{self.signature.named() or ('tensor' if self.signature.tensor else 'none')}", flush=True)

    def respond(self, body, headers):
        """The answer (status, payload, content type) to POST /score."""
        try:
            return self._respond(body, headers)
        except BadRequest as e:
            return error(e)

    def _respond(self, body, headers):
        ctype = headers.get("Content-Type")
        if not ctype:
            return text(415, "Content-Type is missing: send application/json (MLflow's or Azure's payload) or text/csv")
        kind, *rest = [p.strip() for p in ctype.split(";")]
        for p in rest:
            k, _, v = p.partition("=")
            if k.strip().lower() != "charset":
                return text(415, f"Unrecognized content type parameters: {k.strip()}. The MLflow scoring protocol "
                                 "takes application/json bodies with dataframe_split, dataframe_records, instances or inputs.")
            if v.strip().strip('"').lower() not in ("utf-8", "utf8"):
                return text(415, "The scoring server only supports UTF-8")
        kind = kind.lower()
        if kind == "text/csv":
            return self.answer(self.read_csv(body), None, wrap=True)
        if kind != "application/json":
            return text(415, f"This predictor only supports the following content types: Types: ['text/csv', 'application/json']. Got '{ctype}'.")
        doc, params = parse_json(body)
        if "input_data" in doc:
            extra = [k for k in doc if k not in ("input_data", "params")]
            if extra:
                raise BadRequest(f"Invalid input. Azure's payload holds 'input_data' and optionally 'params'; also got {extra}.")
            return self.answer(azure_input(doc["input_data"]), params, wrap=False)
        return self.answer(mlflow_input(doc), params, wrap=True)

    def read_csv(self, body):
        import pandas as pd
        try:
            return pd.read_csv(io.BytesIO(body))
        except Exception as e:
            raise BadRequest("Failed to parse input as a Pandas DataFrame. Ensure that the input is a valid CSV-formatted "
                             f"Pandas DataFrame produced using the `pandas.DataFrame.to_csv()` method. Error: '{e}'") from None

    def score(self, data, params=None):
        """The model's predictions of data, the signature enforced first (BadRequest when the
        data breaks it, or when predict raises). Hangar's batch scorer calls it per file."""
        data = self.signature.enforce(data)
        try:
            return self.predict(data, params=params) if params and self.takes_params else self.predict(data)
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            raise BadRequest("Encountered an unexpected error while evaluating the model. Verify that the serialized input "
                             f"Dataframe is compatible with the model for inference. Error: {type(e).__name__}: {e}") from None

    def answer(self, data, params, wrap):
        out = jsonable(self.score(data, params))
        payload = json.dumps({"predictions": out} if wrap else out).encode("utf-8")
        return 200, payload, "application/json"


# --- the model's requirements ----------------------------------------------------------------

REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(==|>=|<=|~=|!=|>|<)?\s*([^;,\s]*)")


def requirements(path):
    """(file, requirement) of the model's requirements.txt, else its conda.yaml's pip list."""
    req = os.path.join(path, "requirements.txt")
    if os.path.isfile(req):
        with open(req, encoding="utf-8") as f:
            return [("requirements.txt", line.strip()) for line in f
                    if line.strip() and not line.strip().startswith(("#", "-"))]
    conda = os.path.join(path, "conda.yaml")
    if os.path.isfile(conda):
        deps = (read_yaml(conda) or {}).get("dependencies") or []
        return [("conda.yaml", r) for d in deps if isinstance(d, dict) for r in d.get("pip") or []
                if isinstance(r, str) and not r.startswith("-")]
    return []


def warn_requirements(path):
    """Prints a warning for each of the model's requirements the environment does not meet (the
    deployment's environment, the node's Python that has the model's libraries at other versions,
    or the one built from the model's requirements: see docs/endpoints.md)."""
    for file, r in requirements(path):
        m = REQ.match(r)
        if not m:
            continue
        name, op, want = m.groups()
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            why = ("Hangar's built-in scorer stands in for mlflow" if name.lower() in ("mlflow", "mlflow-skinny")
                   else "give the deployment an environment that has it")
            print(f"WARNING: {file}: {r} is not installed in the run's environment ({why})", flush=True)
            continue
        if op == "==" and want and have != want and not have.startswith(want + "."):
            print(f"WARNING: {file}: {r} is not installed; the replica's environment has {name} {have}", flush=True)
