r"""What every probabilistic classifier of the course shares: from class scores to predictions.

The naive Bayes classifiers (``chapters/06_naive_bayes.md``) and logistic regression
(``chapters/07_generative_discriminative.md``) differ only in how they score the classes. Each
returns, for every row, scores :math:`s_c(\mathbf x)` equal to :math:`\log p(y=c \mid \mathbf x)`
up to a constant per row (joint log-likelihoods :math:`\log p(\mathbf x, y=c)` for naive Bayes,
logits :math:`w_{c0} + \mathbf w_c^\top \mathbf x` for logistic regression); this base class turns
them into the posterior,

.. math::

    \log p(y=c \mid \mathbf x) = s_c(\mathbf x) - \log \sum_{c'} e^{s_{c'}(\mathbf x)} ,

the prediction :math:`\arg\max_c s_c(\mathbf x)` and the accuracy, validating ``X`` once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from solutions._validation import as_fitted_input, check_consistent_length
from solutions.softmax import log_softmax


class ProbabilisticClassifier(ABC):
    """Abstract base: ``predict``, ``predict_proba``, ``predict_log_proba`` and ``score``.

    Subclasses implement ``fit`` (which sets ``classes_`` last and ``n_features_in_``) and
    :meth:`_class_scores`.
    """

    #: whether ``fit`` and ``predict`` accept a scipy.sparse matrix
    _accept_sparse = False
    #: the class labels, set by ``fit`` (declared here for the methods that read them)
    classes_: np.ndarray

    @abstractmethod
    def _class_scores(self, X) -> np.ndarray:
        r"""Return scores of shape ``(n_rows, n_classes)``, :math:`\log p(y=c \mid \mathbf x)`
        up to a constant per row, for a validated ``X`` (see :meth:`_check_X`)."""

    def _check_feature_values(self, X) -> None:  # noqa: B027 (a hook: no check by default)
        """Variant-specific checks of the values of a validated ``X`` (fit and predict)."""

    def _check_X(self, X):
        """Validate ``X`` at predict time: fitted, 2-D, finite, right number of features."""
        X = as_fitted_input(self, X, fitted="classes_", n_columns="n_features_in_",
                            allow_sparse=self._accept_sparse)
        self._check_feature_values(X)
        return X

    def predict_log_proba(self, X) -> np.ndarray:
        r"""Return the log posterior :math:`\log p(y=c \mid \mathbf x_n)`.

        Computed as ``log_softmax`` of the class scores (log-sum-exp, no product of
        probabilities).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return log_softmax(self._class_scores(self._check_X(X)), axis=1)

    def predict_proba(self, X) -> np.ndarray:
        r"""Return the posterior :math:`p(y=c \mid \mathbf x_n)`; each row sums to one.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        r"""Return the most probable class :math:`\arg\max_c p(y=c \mid \mathbf x_n)`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels taken from ``classes_`` (ties go to the first class in ``classes_``).
        """
        scores = self._class_scores(self._check_X(X))
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y) -> float:
        """Return the accuracy, the fraction of rows with ``predict(X) == y``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        float
        """
        y = np.asarray(y)
        pred = self.predict(X)
        check_consistent_length(X=pred, y=y)
        return float(np.mean(pred == y))
