import json
import os


def init():
    global W
    with open(os.path.join(os.environ["AZUREML_MODEL_DIR"], "model", "weights.json")) as f:
        W = json.load(f)["w"]


def run(mini_batch):
    rows = []
    for path in mini_batch:
        with open(path) as f:
            rows.append("%s,%d" % (os.path.basename(path), W * int(f.read())))
    return rows
