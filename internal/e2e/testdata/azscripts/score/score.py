import json
import os


def init():
    global W
    with open(os.path.join(os.environ["AZUREML_MODEL_DIR"], "model", "weights.json")) as f:
        W = json.load(f)["w"]


def run(raw_data):
    x = json.loads(raw_data)["x"]
    return {"y": W * x, "deployment": os.environ["DEPLOYMENT_COLOR"]}
