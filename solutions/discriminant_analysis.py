r"""Gaussian discriminant analysis: generative classifiers with full covariance matrices.

Derived in ``chapters/07_generative_discriminative.md`` (section "Gaussian discriminant analysis
with full covariances"). Each class is a Gaussian with its own mean and a full covariance,

.. math::

    p(y = c) = \pi_c, \qquad p(\mathbf x \mid y = c) = \mathcal N(\mathbf x \mid \boldsymbol\mu_c,
    \Sigma_c),

fitted by maximum likelihood: :math:`\hat\pi_c = N_c/N`, :math:`\hat{\boldsymbol\mu}_c` the class
mean, and

* **QDA**: :math:`\hat\Sigma_c = \frac{1}{N_c}\sum_{n: y_n = c}(\mathbf x_n - \hat{\boldsymbol\mu}_c)
  (\mathbf x_n - \hat{\boldsymbol\mu}_c)^\top`, one per class; the log posterior is quadratic in
  :math:`\mathbf x`;
* **LDA**: one shared :math:`\hat\Sigma = \frac1N\sum_c N_c\hat\Sigma_c` (the pooled within-class
  covariance); the quadratic term is the same for every class and cancels, so the log posterior is
  the softmax of the linear scores :math:`\mathbf w_c^\top\mathbf x + b_c` with
  :math:`\mathbf w_c = \hat\Sigma^{-1}\hat{\boldsymbol\mu}_c` and
  :math:`b_c = \log\hat\pi_c - \frac12\hat{\boldsymbol\mu}_c^\top\hat\Sigma^{-1}\hat{\boldsymbol\mu}_c`.

Public API
----------
``LinearDiscriminantAnalysis``, ``QuadraticDiscriminantAnalysis``
    Classifiers with ``fit``, ``predict``, ``predict_proba``, ``predict_log_proba``, ``score`` and
    ``predict_joint_log_proba`` (:math:`\log p(\mathbf x, y = c)`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg

from ._classifier import ProbabilisticClassifier
from ._validation import as_2d_float, as_fitted_input, check_consistent_length

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]


def _validate_Xy(X, y):
    X = as_2d_float(X, "X")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D of shape (n_samples,); got shape {y.shape}")
    check_consistent_length(X=X, y=y)
    classes, y_idx, counts = np.unique(y, return_inverse=True, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"y has {classes.size} class; a classifier needs at least 2 classes")
    return X, classes, y_idx, counts


def _cholesky(cov: np.ndarray, what: str) -> np.ndarray:
    """Cholesky factor of ``cov``; a covariance singular to working precision is an error."""
    eigvals = np.linalg.eigvalsh(cov)
    try:
        if eigvals[0] <= cov.shape[0] * np.finfo(float).eps * max(eigvals[-1], 0.0):
            raise linalg.LinAlgError
        return linalg.cholesky(cov, lower=True)
    except linalg.LinAlgError:
        raise ValueError(
            f"the {what} is singular (a feature is constant or a linear combination of others "
            "within the class, or there are fewer samples than features); drop or combine features"
        ) from None


def _gaussian_log_density(X: np.ndarray, mean: np.ndarray, chol: np.ndarray) -> np.ndarray:
    r"""Rows of ``X`` under :math:`\mathcal N(\mu, LL^\top)`, via one triangular solve."""
    z = linalg.solve_triangular(chol, (X - mean).T, lower=True)            # L^-1 (x - mu)
    logdet = 2.0 * np.sum(np.log(np.diag(chol)))
    return -0.5 * (X.shape[1] * np.log(2.0 * np.pi) + logdet + np.sum(z**2, axis=0))


class _GaussianClassifier(ProbabilisticClassifier):
    """Shared fitting of priors and means; subclasses set the covariances."""

    #: the Cholesky factor of class ``c``'s covariance, given by each subclass
    _chol: Callable[[int], np.ndarray]

    def _fit_moments(self, X, y):
        X, classes, y_idx, counts = _validate_Xy(X, y)
        onehot = np.eye(classes.size)[y_idx]                                 # (N, C)
        means = (onehot.T @ X) / counts[:, None]                             # (C, D)
        self.priors_ = counts / counts.sum()
        self.means_ = means
        self.n_features_in_ = X.shape[1]
        return X, classes, y_idx, counts

    def predict_joint_log_proba(self, X) -> np.ndarray:
        r"""Joint log-likelihood :math:`\log\pi_c + \log\mathcal N(\mathbf x\mid\boldsymbol\mu_c,\Sigma_c)`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        X = as_fitted_input(self, X, fitted="classes_", n_columns="n_features_in_")
        return self._class_scores(X)

    def _class_scores(self, X) -> np.ndarray:
        return np.column_stack([
            np.log(self.priors_[c]) + _gaussian_log_density(X, self.means_[c], self._chol(c))
            for c in range(self.classes_.size)
        ])


class LinearDiscriminantAnalysis(_GaussianClassifier):
    r"""Linear discriminant analysis: Gaussian classes with one shared full covariance.

    Fitted by maximum likelihood: class priors :math:`N_c/N`, class means, and the pooled
    within-class covariance (divisor :math:`N`)

    .. math::

        \hat\Sigma = \frac1N\sum_{c}\sum_{n: y_n = c}(\mathbf x_n - \hat{\boldsymbol\mu}_c)
        (\mathbf x_n - \hat{\boldsymbol\mu}_c)^\top .

    The log posterior is a softmax of linear scores,
    :math:`\log p(y = c\mid\mathbf x) = \mathbf w_c^\top\mathbf x + b_c - \log\sum_{c'}
    e^{\mathbf w_{c'}^\top\mathbf x + b_{c'}}`, with :math:`\mathbf w_c = \hat\Sigma^{-1}
    \hat{\boldsymbol\mu}_c` and :math:`b_c = \log\hat\pi_c - \frac12\hat{\boldsymbol\mu}_c^\top
    \hat\Sigma^{-1}\hat{\boldsymbol\mu}_c`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
        :math:`\hat\pi_c = N_c / N`.
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_features, n_features)
        The shared :math:`\hat\Sigma`.
    coef_ : ndarray of shape (n_classes, n_features)
        Rows :math:`\mathbf w_c`.
    intercept_ : ndarray of shape (n_classes,)
        :math:`b_c`.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [3.0, 3.0], [4.0, 3.5], [3.5, 4.0]])
    >>> lda = LinearDiscriminantAnalysis().fit(X, [0, 0, 0, 1, 1, 1])
    >>> lda.predict([[0.5, 0.5], [3.5, 3.5]])
    array([0, 1])
    """

    def fit(self, X, y):
        r"""Fit priors, means and the pooled covariance by maximum likelihood.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)
            Class labels; at least two classes.

        Returns
        -------
        self : LinearDiscriminantAnalysis

        Raises
        ------
        ValueError
            If ``X`` is not a finite 2-D array, ``y`` does not match it or has one class, or the
            pooled covariance is singular.
        """
        X, classes, y_idx, _ = self._fit_moments(X, y)
        resid = X - self.means_[y_idx]
        cov = resid.T @ resid / X.shape[0]
        chol = _cholesky(cov, "pooled within-class covariance")
        self.covariance_ = cov
        self._chol_shared = chol
        self.coef_ = linalg.cho_solve((chol, True), self.means_.T).T                  # Sigma^-1 mu_c
        self.intercept_ = np.log(self.priors_) - 0.5 * np.sum(self.coef_ * self.means_, axis=1)
        self.classes_ = classes
        return self

    def _chol(self, c: int) -> np.ndarray:
        return self._chol_shared

    def decision_function(self, X) -> np.ndarray:
        r"""Linear scores :math:`\mathbf w_c^\top\mathbf x + b_c`, shape ``(n_samples, n_classes)``.

        They differ from :meth:`predict_joint_log_proba` by a term that is the same for every class.
        """
        X = as_fitted_input(self, X, fitted="classes_", n_columns="n_features_in_")
        return X @ self.coef_.T + self.intercept_


class QuadraticDiscriminantAnalysis(_GaussianClassifier):
    r"""Quadratic discriminant analysis: Gaussian classes, each with its own full covariance.

    Fitted by maximum likelihood (class priors :math:`N_c/N`, class means, and class covariances
    with divisor :math:`N_c`); the log posterior

    .. math::

        \log p(y = c\mid\mathbf x) = \log\hat\pi_c - \tfrac12\log\lvert\hat\Sigma_c\rvert
        - \tfrac12(\mathbf x - \hat{\boldsymbol\mu}_c)^\top\hat\Sigma_c^{-1}
        (\mathbf x - \hat{\boldsymbol\mu}_c) + \text{const}(\mathbf x)

    is quadratic in :math:`\mathbf x`, so the decision boundaries are conics.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariances_ : ndarray of shape (n_classes, n_features, n_features)
        :math:`\hat\Sigma_c`, divisor :math:`N_c` (the maximum-likelihood estimate).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (50, 2)), rng.normal(0, 4, (50, 2))])
    >>> qda = QuadraticDiscriminantAnalysis().fit(X, [0] * 50 + [1] * 50)
    >>> qda.predict([[0.0, 0.0], [8.0, 8.0]])   # near the centre, the narrow class wins
    array([0, 1])
    """

    def fit(self, X, y):
        r"""Fit priors, means and one covariance per class by maximum likelihood.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self : QuadraticDiscriminantAnalysis

        Raises
        ------
        ValueError
            If ``X`` is not a finite 2-D array, ``y`` does not match it or has one class, or a
            class covariance is singular (e.g. a class with no more samples than features).
        """
        X, classes, y_idx, counts = self._fit_moments(X, y)
        covs, chols = [], []
        for c in range(classes.size):
            resid = X[y_idx == c] - self.means_[c]
            cov = resid.T @ resid / counts[c]
            chols.append(_cholesky(cov, f"covariance of class {classes[c].item()!r}"))
            covs.append(cov)
        self.covariances_ = np.array(covs)
        self._chols = chols
        self.classes_ = classes
        return self

    def _chol(self, c: int) -> np.ndarray:
        return self._chols[c]
