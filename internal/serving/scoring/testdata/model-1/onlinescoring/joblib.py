# A stand-in for joblib so that Azure's example score.py runs unchanged, whether or not a real
# joblib is installed (a module beside the script comes first, as on Azure): load() reads a
# linear model written as JSON {"coef": [...], "intercept": x} where the real file holds a
# pickled scikit-learn LinearRegression.
import json

import numpy


class LinearModel:
    def __init__(self, coef, intercept):
        self.coef = numpy.array(coef, dtype=float)
        self.intercept = float(intercept)

    def predict(self, x):
        return numpy.asarray(x, dtype=float) @ self.coef + self.intercept


def load(path):
    with open(path) as f:
        m = json.load(f)
    return LinearModel(m["coef"], m["intercept"])
