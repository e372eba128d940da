"""Hangar's built-in batch scorer for no-code MLflow batch deployments.

A batch deployment whose model is an MLflow model and that gives no code_configuration runs
this file as its entry script under Hangar's parallel driver, as Azure runs the scoring script
it generates for such a deployment. It loads the model with Hangar's built-in MLflow scorer
(the module at $HANGAR_MLFLOW_SCORER: the same loaders and signature as a no-code online
deployment) and scores each file of a mini-batch with one predict() call:

- .csv (read by pandas.read_csv, a header row first), .parquet and .pqt (pandas.read_parquet,
  which needs pyarrow or fastparquet in the environment) become a DataFrame; the signature's
  inputs are enforced as for an online request (a missing column, or a value that is not of its
  column's type, fails the file);
- any other file fails: "Error processing input file: '<path>'. File type 'avro' is not
  supported" (images, which Azure reads into tensors, are not read here: give such a model a
  scoring script).

A file that fails raises, so its mini-batch fails (and is retried, then counted against
error_threshold, by the parallel driver). run() returns one row per input row, Azure's
predictions.csv line `row,prediction,file_name` (CSV, no header): the row's position in its
file, the prediction as predict() returned it (a number or a string as is; a row of several
values as its JSON list), and the file's base name.

Pickles are code: this runs only inside the job's run box, never in the server.
"""

import csv
import importlib.util
import io
import json
import os

TABLES = {".csv": "csv", ".parquet": "parquet", ".pqt": "parquet"}

scorer = None
module = None


def load_module(path):
    spec = importlib.util.spec_from_file_location("hangar_mlflow_scorer", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def init():
    global scorer, module
    path = os.environ.get("HANGAR_MLFLOW_SCORER")
    model_dir = os.environ.get("AZUREML_MODEL_DIR")
    if not path or not model_dir:
        raise RuntimeError("Hangar's MLflow batch scorer needs HANGAR_MLFLOW_SCORER and AZUREML_MODEL_DIR "
                           "(set by the supervisor for a no-code batch deployment)")
    module = load_module(path)
    scorer = module.Scorer(model_dir)
    try:
        scorer.init()
    except module.ScorerError as e:
        raise RuntimeError(str(e)) from None


class FileError(Exception):
    """A file that cannot be scored; the message is Azure's."""


def read_table(path):
    import pandas as pd
    ext = os.path.splitext(path)[1].lower()
    kind = TABLES.get(ext)
    if kind is None:
        raise FileError(f"Error processing input file: '{path}'. File type '{ext.lstrip('.') or 'none'}' is not supported "
                        f"(Hangar's built-in MLflow batch scorer reads {', '.join(sorted(TABLES))}; give the deployment a scoring script for others)")
    try:
        if kind == "csv":
            return pd.read_csv(path)
        return pd.read_parquet(path)
    except ImportError as e:
        raise FileError(f"Error processing input file: '{path}'. Reading parquet needs pyarrow or fastparquet in the job's environment: {e}") from None
    except Exception as e:
        raise FileError(f"Error processing input file: '{path}'. Exception: {type(e).__name__}: {e}") from None


def values(result, rows, path):
    """predict()'s result as one value per input row."""
    import numpy as np
    import pandas as pd
    if isinstance(result, pd.DataFrame):
        out = [r[0] if len(r) == 1 else list(r) for r in result.itertuples(index=False, name=None)]
    elif isinstance(result, pd.Series):
        out = list(result)
    elif isinstance(result, np.ndarray):
        out = [r.tolist() if isinstance(r, np.ndarray) else r for r in result]
        out = [r[0] if isinstance(r, list) and len(r) == 1 else r for r in out]
    elif isinstance(result, (list, tuple)):
        out = list(result)
    else:
        raise FileError(f"Error processing input file: '{path}'. predict() returned a {type(result).__name__}, "
                        "not one prediction per row")
    if len(out) != rows:
        raise FileError(f"Error processing input file: '{path}'. predict() returned {len(out)} predictions for {rows} rows")
    return out


def cell(v):
    """A prediction as its CSV cell: numbers and strings as they are, anything else as JSON."""
    import numpy as np
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (str, int, float, bool)) or v is None:
        return "" if v is None else str(v)
    return json.dumps(v, default=lambda o: o.item() if isinstance(o, np.generic) else str(o))


def line(*fields):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(fields)
    return buf.getvalue()


def score_file(path):
    frame = read_table(path)
    try:
        result = scorer.score(frame)
    except module.BadRequest as e:
        raise FileError(f"Error processing input file: '{path}'. Exception: {e}") from None
    name = os.path.basename(path)
    return [line(i, cell(v), name) for i, v in enumerate(values(result, len(frame), path))]


def run(mini_batch):
    if not isinstance(mini_batch, list):
        raise FileError("Hangar's built-in MLflow batch scorer scores files (a uri_folder or uri_file input), "
                        f"not an mltable's rows (got a {type(mini_batch).__name__})")
    rows = []
    for path in mini_batch:
        rows.extend(score_file(path))
    print(f"scored {len(mini_batch)} file(s), {len(rows)} row(s)", flush=True)
    return rows
