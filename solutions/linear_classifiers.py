r"""Linear classifiers: the softmax, a generative one and a discriminative one.

Derived in ``chapters/07_generative_discriminative.md`` (the naive Bayes background is in
``chapters/06_naive_bayes.md`` and :mod:`solutions.naive_bayes`).

Both classifiers here predict with the same form,

.. math::

    p(y=c \mid \mathbf x) = \operatorname{softmax}_c(w_{c0} + \mathbf w_c^\top \mathbf x)
        = \frac{\exp(w_{c0} + \mathbf w_c^\top \mathbf x)}
               {\sum_{c'} \exp(w_{c'0} + \mathbf w_{c'}^\top \mathbf x)},

but fit the weights differently:

* :class:`SharedVarianceGaussianNB` (generative) estimates class means and one shared variance
  by maximum likelihood of :math:`p(\mathbf x, y)` and *derives* the weights
  :math:`\mathbf w_c = \boldsymbol\mu_c/\sigma^2`,
  :math:`w_{c0} = \ln N_c - \lVert\boldsymbol\mu_c\rVert^2 / (2\sigma^2)`;
* :class:`LogisticRegression` (discriminative) fits the weights directly by maximising the
  conditional likelihood :math:`\prod_n p(y_n \mid \mathbf x_n)`, with an L2 penalty.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from solutions._classifier import ProbabilisticClassifier
from solutions._validation import ConvergenceWarning, as_2d_float, check_int, check_positive
from solutions.naive_bayes import BaseNaiveBayes, _class_indicator, _gaussian_jll, _validate_Xy
from solutions.softmax import log_softmax, softmax

__all__ = [
    "ConvergenceWarning",
    "LogisticRegression",
    "SharedVarianceGaussianNB",
    "log_softmax",
    "softmax",
    "softmax_cross_entropy",
]


# ====================================================================== linear scores
class _LinearScores:
    """``decision_function`` of a fitted linear classifier (``coef_``, ``intercept_``)."""

    #: set by the classifier's ``fit``, and its input check: what the mixin reads
    coef_: np.ndarray
    intercept_: np.ndarray
    _check_X: Callable[[object], np.ndarray]

    def _logits(self, X) -> np.ndarray:
        return X @ self.coef_.T + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        r"""Return the linear scores (logits) :math:`w_{c0} + \mathbf w_c^\top \mathbf x_n`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``softmax`` of each row is ``predict_proba``.
        """
        return self._logits(self._check_X(X))


# ====================================================================== generative
class SharedVarianceGaussianNB(_LinearScores, BaseNaiveBayes):
    r"""Gaussian naive Bayes with one variance :math:`\sigma^2` shared by all features and classes.

    Model: :math:`p(\mathbf x \mid y=c) = \mathcal N(\mathbf x; \boldsymbol\mu_c, \sigma^2 I)`.
    Maximum likelihood gives the class means :math:`\hat{\boldsymbol\mu}_c` and, when ``sigma`` is
    not given, the pooled within-class variance

    .. math::

        \hat\sigma^2 = \frac{1}{N D} \sum_{n=1}^{N} \lVert \mathbf x_n - \hat{\boldsymbol\mu}_{y_n}
            \rVert^2 .

    Expanding :math:`-\lVert\mathbf x - \boldsymbol\mu_c\rVert^2/(2\sigma^2)`, the term
    :math:`-\lVert\mathbf x\rVert^2/(2\sigma^2)` is the same for every class and cancels in Bayes'
    rule, leaving a posterior that is a softmax of functions *linear* in :math:`\mathbf x`:

    .. math::

        p(y=c \mid \mathbf x) = \operatorname{softmax}_c(w_{c0} + \mathbf w_c^\top\mathbf x),
        \qquad \mathbf w_c = \frac{\boldsymbol\mu_c}{\sigma^2}, \qquad
        w_{c0} = \ln N_c - \frac{\lVert\boldsymbol\mu_c\rVert^2}{2\sigma^2}.

    As in the lecture the intercept uses :math:`\ln N_c` rather than the log prior
    :math:`\ln(N_c/N)`: the two differ by :math:`\ln N`, a constant over classes that cancels in
    the softmax, so the probabilities are the same. ``predict_proba`` is computed from the joint
    log-likelihood like every naive Bayes classifier; ``decision_function`` gives the linear form.

    Parameters
    ----------
    sigma : float or None, default None
        The shared standard deviation :math:`\sigma > 0`; ``None`` estimates it as above.

    Attributes
    ----------
    theta_ : ndarray of shape (n_classes, n_features)
        Class means :math:`\hat{\boldsymbol\mu}_c`.
    sigma_ : float
        :math:`\sigma` (given or estimated).
    var_ : float
        :math:`\sigma^2`.
    coef_ : ndarray of shape (n_classes, n_features)
        :math:`w_{cd} = \mu_{cd}/\sigma^2`.
    intercept_ : ndarray of shape (n_classes,)
        :math:`w_{c0} = \ln N_c - \sum_d \mu_{cd}^2/(2\sigma^2)`.
    class_count_, class_log_prior_, classes_, n_features_in_
        See :class:`solutions.naive_bayes.BaseNaiveBayes`.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 2.0], [4.0, 0.0], [4.0, 2.0]])
    >>> clf = SharedVarianceGaussianNB().fit(X, [0, 0, 1, 1])
    >>> clf.theta_, clf.var_
    (array([[0., 1.],
           [4., 1.]]), 0.5)
    >>> clf.coef_
    array([[0., 2.],
           [8., 2.]])
    >>> np.allclose(clf.predict_proba(X), softmax(clf.decision_function(X)))
    True
    """

    def __init__(self, sigma: float | None = None):
        self.sigma = sigma

    def fit(self, X, y):
        """Estimate class means and the shared variance; derive ``coef_`` and ``intercept_``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        sigma = None if self.sigma is None else check_positive(self.sigma, "sigma", strict=True)
        X, y_idx, classes, counts = self._validate_training_data(X, y)
        theta = (_class_indicator(y_idx, classes.shape[0]) @ X) / counts[:, None]
        if sigma is None:
            resid = X - theta[y_idx]
            var = float(np.einsum("ij,ij->", resid, resid)) / X.size
            if not var > 0:
                raise ValueError(
                    "the pooled within-class variance is 0 (every row equals its class mean); "
                    "give sigma explicitly"
                )
        else:
            var = sigma * sigma
        D = X.shape[1]
        self.theta_ = theta
        self.var_ = var
        self.sigma_ = float(np.sqrt(var))
        self.coef_ = theta / var
        self.intercept_ = np.log(counts) - (theta * theta).sum(axis=1) / (2.0 * var)
        self._inv_std = np.full_like(theta, 1.0 / np.sqrt(var))
        self._set_class_statistics(classes, counts, D)
        self._const = self.class_log_prior_ - 0.5 * D * np.log(2.0 * np.pi * var)
        return self

    def _joint_log_likelihood(self, X) -> np.ndarray:
        return _gaussian_jll(X, self.theta_, self._inv_std, self._const)


# ====================================================================== discriminative
def _loss_grad(W, b, X, Y, reg):
    """Unvalidated core of :func:`softmax_cross_entropy`."""
    Z = X @ W.T
    Z += b
    lse = logsumexp(Z, axis=1)
    loss = float(lse.sum() - np.einsum("nc,nc->", Y, Z)) + 0.5 * reg * float(np.einsum("cd,cd->", W, W))
    G = np.exp(Z - lse[:, None])  # P
    G -= Y  # dL/dZ = P - Y (for rows of Y summing to one)
    grad_W = G.T @ X
    grad_W += reg * W
    return loss, grad_W, G.sum(axis=0)


def softmax_cross_entropy(W, b, X, Y, reg: float = 0.0):
    r"""Penalised softmax cross-entropy (total negative log-likelihood) and its gradient.

    .. math::

        L(W, \mathbf b) = -\sum_{n=1}^{N}\sum_{c} Y_{nc}\,
            \log\operatorname{softmax}_c(W\mathbf x_n + \mathbf b) + \frac{\lambda}{2}\lVert W\rVert_F^2,

    .. math::

        \nabla_W L = (P - Y)^\top X + \lambda W, \qquad \nabla_{\mathbf b} L = (P - Y)^\top \mathbf 1,

    with :math:`P_{nc} = \operatorname{softmax}_c(W\mathbf x_n + \mathbf b)`. The intercept is not
    penalised.

    Parameters
    ----------
    W : array_like of shape (n_classes, n_features)
    b : array_like of shape (n_classes,)
    X : array_like of shape (n_samples, n_features)
    Y : array_like of shape (n_samples, n_classes)
        One-hot targets (or any rows of class probabilities summing to one).
    reg : float, default 0.0
        :math:`\lambda \ge 0`.

    Returns
    -------
    loss : float
    grad : tuple (grad_W, grad_b)
        Arrays of shape ``(n_classes, n_features)`` and ``(n_classes,)``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); Y = np.eye(2)
    >>> loss, (gW, gb) = softmax_cross_entropy(np.zeros((2, 2)), np.zeros(2), X, Y)
    >>> bool(np.isclose(loss, 2 * np.log(2))), gb
    (True, array([0., 0.]))
    """
    reg = check_positive(reg, "reg", strict=False)
    X = as_2d_float(X, "X")
    Y = as_2d_float(Y, "Y")
    W = as_2d_float(W, "W")
    b = np.asarray(b, dtype=float)
    n, D = X.shape
    C = Y.shape[1]
    if Y.shape[0] != n:
        raise ValueError(f"mismatched lengths: X has {n}, Y has {Y.shape[0]} rows")
    if W.shape != (C, D):
        raise ValueError(f"W must have shape (n_classes, n_features) = {(C, D)}; got {W.shape}")
    if b.shape != (C,):
        raise ValueError(f"b must have shape (n_classes,) = {(C,)}; got {b.shape}")
    loss, gW, gb = _loss_grad(W, b, X, Y, reg)
    return loss, (gW, gb)


class LogisticRegression(_LinearScores, ProbabilisticClassifier):
    r"""Multiclass (softmax) logistic regression with an L2 penalty, fitted by L-BFGS-B.

    Minimises the penalised total negative log-likelihood of :func:`softmax_cross_entropy`,

    .. math::

        L(W, \mathbf b) = -\sum_n \log p(y_n \mid \mathbf x_n) + \frac{\lambda}{2}\lVert W\rVert_F^2,
        \qquad p(y=c \mid \mathbf x) = \operatorname{softmax}_c(\mathbf w_c^\top\mathbf x + b_c),

    with :func:`scipy.optimize.minimize` (``method="L-BFGS-B"``) and the analytic gradient
    :math:`\nabla_W L = (P - Y)^\top X + \lambda W`. The optimiser works on :math:`L/N` (same
    minimiser, tolerances independent of :math:`N`).

    **Relation to scikit-learn.** scikit-learn minimises :math:`C\sum_n(-\log p(y_n\mid\mathbf x_n))
    + \frac12\lVert W\rVert^2`, i.e. :math:`L` with :math:`\lambda = 1/C`. For more than two
    classes ``reg = 1/C`` gives the same ``coef_``. For two classes scikit-learn uses the sigmoid
    with one weight vector :math:`\mathbf v`; here both softmax rows are kept and the penalty makes
    them opposite, :math:`\mathbf w_1 = -\mathbf w_0 = \mathbf v/2`, so ``reg = 2/C`` matches
    (``coef_[1] - coef_[0]`` is scikit-learn's ``coef_[0]``).

    The softmax is unchanged by adding a constant to every intercept; after fitting the
    intercepts are shifted to sum to zero.

    Parameters
    ----------
    reg : float, default 1.0
        L2 penalty :math:`\lambda \ge 0` on the weights (not the intercept). ``reg=0`` is plain
        maximum likelihood, which diverges on linearly separable data.
    max_iter : int, default 1000
        Maximum number of L-BFGS-B iterations.
    tol : float, default 1e-6
        Tolerance on the largest entry of the projected gradient of :math:`L/N` (L-BFGS-B
        ``gtol``). Tolerances below about ``1e-8`` can be out of reach in float64: the line search
        then stops without being able to decrease :math:`L` and a :class:`ConvergenceWarning` is
        issued although the fit is as good as float64 allows.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
    intercept_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Number of L-BFGS-B iterations.
    loss_ : float
        Final value of :math:`L` (total, not divided by :math:`N`).
    n_features_in_ : int

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = LogisticRegression(reg=0.1).fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[0.2], [2.8]])
    array(['a', 'b'], dtype='<U1')
    >>> bool(np.allclose(clf.predict_proba(X).sum(axis=1), 1.0))
    True
    """

    def __init__(self, reg: float = 1.0, max_iter: int = 1000, tol: float = 1e-6):
        self.reg = reg
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y):
        """Fit the weights by penalised maximum conditional likelihood.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        reg = check_positive(self.reg, "reg", strict=False)
        tol = check_positive(self.tol, "tol", strict=True)
        max_iter = check_int(self.max_iter, "max_iter")
        X, y_idx, classes, _ = _validate_Xy(X, y)
        n, D = X.shape
        C = classes.shape[0]
        Y = np.zeros((n, C))
        Y[np.arange(n), y_idx] = 1.0

        def fun(params):
            W = params[: C * D].reshape(C, D)
            b = params[C * D:]
            loss, gW, gb = _loss_grad(W, b, X, Y, reg)
            return loss / n, np.concatenate([gW.ravel(), gb]) / n

        res = minimize(fun, np.zeros(C * (D + 1)), jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15})
        if not res.success:
            warnings.warn(f"LogisticRegression did not converge: {res.message}",
                          ConvergenceWarning, stacklevel=2)
        W = res.x[: C * D].reshape(C, D).copy()
        b = res.x[C * D:].copy()
        b -= b.mean()
        self.coef_ = W
        self.intercept_ = b
        self.n_iter_ = int(res.nit)
        self.loss_ = float(res.fun) * n
        self.n_features_in_ = D
        self.classes_ = classes
        return self

    def _class_scores(self, X) -> np.ndarray:
        return self._logits(X)
