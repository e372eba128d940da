"""Train a softmax-regression classifier on the iris data set, in plain Python.

No dependencies: it runs with any Python 3. Each epoch logs metrics to Hangar through
$HANGAR_METRICS_FILE (JSON lines), and the trained model is written to ./outputs/model.json
and to the named output folder given with --model-dir.
"""
import argparse
import csv
import json
import math
import os
import random
import time


def log_metric(name, value, step):
    """Append one metric to the file Hangar watches (no-op outside Hangar)."""
    path = os.environ.get("HANGAR_METRICS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"name": name, "value": value, "step": step}) + "\n")


def load(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    classes = sorted({r["species"] for r in rows})
    features = [k for k in rows[0] if k != "species"]
    xs = [[float(r[k]) for k in features] for r in rows]
    ys = [classes.index(r["species"]) for r in rows]
    return xs, ys, classes, features


def standardize(xs):
    n, d = len(xs), len(xs[0])
    mean = [sum(x[j] for x in xs) / n for j in range(d)]
    std = [math.sqrt(sum((x[j] - mean[j]) ** 2 for x in xs) / n) or 1.0 for j in range(d)]
    return [[(x[j] - mean[j]) / std[j] for j in range(d)] for x in xs], mean, std


def softmax(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


def predict(w, b, x):
    return softmax([sum(wi * xi for wi, xi in zip(w[k], x)) + b[k] for k in range(len(b))])


def evaluate(w, b, xs, ys):
    loss, correct = 0.0, 0
    for x, y in zip(xs, ys):
        p = predict(w, b, x)
        loss -= math.log(max(p[y], 1e-12))
        correct += int(max(range(len(p)), key=p.__getitem__) == y)
    return loss / len(xs), correct / len(xs)


def init_params(xs, k, rng):
    d = len(xs[0])
    w = [[rng.gauss(0, 0.01) for _ in range(d)] for _ in range(k)]
    b = [0.0] * k
    return w, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--model-dir", default="outputs")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    xs, ys, classes, features = load(args.data)
    xs, mean, std = standardize(xs)
    idx = list(range(len(xs)))
    rng.shuffle(idx)
    cut = int(0.8 * len(idx))
    train_i, test_i = idx[:cut], idx[cut:]
    xtr, ytr = [xs[i] for i in train_i], [ys[i] for i in train_i]
    xte, yte = [xs[i] for i in test_i], [ys[i] for i in test_i]
    print(f"iris: {len(xtr)} training and {len(xte)} test samples, {len(classes)} classes")

    w, b = init_params(xtr, len(classes), rng)
    start = time.time()
    for epoch in range(1, args.epochs + 1):
        order = list(range(len(xtr)))
        rng.shuffle(order)
        for i in order:
            p = predict(w, b, xtr[i])
            for k in range(len(classes)):
                g = p[k] - (1.0 if k == ytr[i] else 0.0)
                b[k] -= args.lr * g
                for j in range(len(xtr[i])):
                    w[k][j] -= args.lr * g * xtr[i][j]
        loss, acc = evaluate(w, b, xtr, ytr)
        test_loss, test_acc = evaluate(w, b, xte, yte)
        log_metric("loss", loss, epoch)
        log_metric("accuracy", acc, epoch)
        log_metric("test_accuracy", test_acc, epoch)
        print(f"epoch {epoch:3d}  loss {loss:.4f}  accuracy {acc:.3f}  test_accuracy {test_acc:.3f}")

    model = {"classes": classes, "features": features, "mean": mean, "std": std, "weights": w, "bias": b,
             "test_accuracy": test_acc, "epochs": args.epochs, "lr": args.lr,
             "train_seconds": round(time.time() - start, 3)}
    os.makedirs("outputs", exist_ok=True)
    os.makedirs(args.model_dir, exist_ok=True)
    for folder in {"outputs", args.model_dir}:
        with open(os.path.join(folder, "model.json"), "w") as f:
            json.dump(model, f, indent=2)
    print(f"final test accuracy {test_acc:.3f}; model written to outputs/model.json and {args.model_dir}")


if __name__ == "__main__":
    main()
