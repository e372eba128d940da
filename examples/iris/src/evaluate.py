"""Evaluate a model written by train.py on a whole iris CSV file (plain Python, no dependencies).

Writes report.json (accuracy, per-class counts) to --report and prints a summary."""

import argparse
import csv
import json
import math
import os


def predict(model, row):
    x = [(float(v) - m) / s for v, m, s in zip(row, model["mean"], model["std"])]
    z = [sum(w * xi for w, xi in zip(ws, x)) + b for ws, b in zip(model["weights"], model["bias"])]
    top = max(z)
    e = [math.exp(v - top) for v in z]
    return max(range(len(e)), key=lambda k: e[k])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", required=True, help="the folder train.py wrote model.json to")
    ap.add_argument("--report", required=True)
    args = ap.parse_args()
    with open(os.path.join(args.model, "model.json")) as f:
        model = json.load(f)
    with open(args.data, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], [r for r in rows[1:] if r]
    classes = model["classes"]
    right, per_class = 0, {c: [0, 0] for c in classes}
    for r in rows:
        label = r[-1]
        guess = classes[predict(model, r[:-1])]
        per_class[label][1] += 1
        if guess == label:
            right += 1
            per_class[label][0] += 1
    report = {"samples": len(rows), "accuracy": right / len(rows),
              "per_class": {c: {"right": v[0], "of": v[1]} for c, v in per_class.items()},
              "features": header[:-1]}
    os.makedirs(args.report, exist_ok=True)
    with open(os.path.join(args.report, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(f"evaluated {len(rows)} samples: accuracy {report['accuracy']:.3f}")


if __name__ == "__main__":
    main()
