r"""Probabilistic PCA: PCA as the maximum-likelihood fit of a linear-Gaussian latent-variable model.

The chapter ``chapters/01_pca.md`` (section "Probabilistic PCA") derives everything implemented
here. Each sample :math:`\mathbf x \in \mathbb{R}^D` is generated from a latent code
:math:`\mathbf z \in \mathbb{R}^K` as

.. math::

    \mathbf z \sim \mathcal N(\mathbf 0, I_K), \qquad
    \mathbf x = W \mathbf z + \boldsymbol\mu + \boldsymbol\varepsilon, \qquad
    \boldsymbol\varepsilon \sim \mathcal N(\mathbf 0, \sigma^2 I_D),

so that :math:`\mathbf x \sim \mathcal N(\boldsymbol\mu, C)` with :math:`C = W W^\top + \sigma^2 I_D`.
With the lecture's covariance :math:`\Sigma = \frac1N \sum_n (\mathbf x_n - \bar{\mathbf x})
(\mathbf x_n - \bar{\mathbf x})^\top`, eigenvalues :math:`\lambda_1 \ge \dots \ge \lambda_D` and
eigenvectors :math:`U`, the maximum-likelihood estimate is (Tipping and Bishop, 1999)

.. math::

    \hat{\boldsymbol\mu} = \bar{\mathbf x}, \qquad
    \hat\sigma^2 = \frac{1}{D - K} \sum_{j > K} \lambda_j, \qquad
    \hat W = U_K \,(\Lambda_K - \hat\sigma^2 I_K)^{1/2},

unique up to a rotation :math:`\hat W R` of the latent space. The noise variance is the average
variance PCA discards. :class:`ProbabilisticPCA` computes it in closed form (``method="closed_form"``)
or by expectation--maximisation (``method="em"``), the algorithm chapter 5 develops for mixtures.

Public API
----------
``ProbabilisticPCA``
    The estimator: ``fit``, ``transform`` (posterior mean of the codes), ``score_samples``
    (log-density of each sample), ``score`` (mean log-density), ``get_covariance``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg

from ._validation import (
    ConvergenceWarning,
    as_2d_float,
    as_fitted_input,
    check_int,
    check_option,
    check_positive,
)
from .pca import _svd_top

__all__ = ["ProbabilisticPCA", "ConvergenceWarning"]

_METHODS = ("closed_form", "em")


class ProbabilisticPCA:
    r"""Probabilistic PCA fitted by maximum likelihood, in closed form or by EM.

    The model is :math:`\mathbf x = W\mathbf z + \boldsymbol\mu + \boldsymbol\varepsilon` with
    :math:`\mathbf z \sim \mathcal N(\mathbf 0, I_K)` and
    :math:`\boldsymbol\varepsilon \sim \mathcal N(\mathbf 0, \sigma^2 I_D)`; its marginal is
    :math:`\mathcal N(\boldsymbol\mu, C)`, :math:`C = WW^\top + \sigma^2 I_D`, and the mean
    log-likelihood of data with lecture covariance :math:`\Sigma` (divisor :math:`N`) is

    .. math::

        \frac1N \ln p(X) = -\frac12\Big(D \ln 2\pi + \ln\lvert C\rvert
        + \operatorname{tr}(C^{-1}\Sigma)\Big).

    Parameters
    ----------
    n_components : int
        Latent dimension :math:`K`, with ``1 <= n_components <= min(n_samples, n_features) - 1``
        so that some variance is left for the noise (checked in :meth:`fit`).
    method : {"closed_form", "em"}, default "closed_form"
        ``"closed_form"``: the Tipping--Bishop solution from the thin SVD of the centred data.
        ``"em"``: expectation--maximisation from a random :math:`W` (see :meth:`fit`).
    max_iter : int, default 1000
        Maximum number of EM iterations (``"em"`` only).
    tol : float, default 1e-8
        EM stops when the mean log-likelihood increases by less than ``tol`` (``"em"`` only).
    random_state : int, numpy.random.Generator or None, default None
        Seed or generator for EM's initial :math:`W` (``"em"`` only).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        :math:`\hat{\boldsymbol\mu} = \bar{\mathbf x}`.
    components_ : ndarray of shape (n_components, n_features)
        :math:`\hat W^\top`, the loading matrix transposed. For ``"closed_form"`` its rows are the
        principal directions scaled by :math:`\sqrt{\lambda_k - \hat\sigma^2}`; for ``"em"`` they
        span the same subspace up to a rotation.
    noise_variance_ : float
        :math:`\hat\sigma^2 > 0`.
    n_components_ : int
        :math:`K`.
    n_features_in_ : int
        :math:`D`.
    n_iter_ : int
        EM iterations run (0 for ``"closed_form"``).
    log_likelihood_ : ndarray of shape (n_iter_ + 1,)
        Mean training log-likelihood per sample after each EM iteration, starting with the
        initial parameters (one value for ``"closed_form"``).

    Notes
    -----
    scikit-learn's ``PCA.score`` evaluates the same density with its variances of divisor
    :math:`N - 1`, and when :math:`N \le D` its ``noise_variance_`` averages only the
    :math:`\min(N, D) - K` non-trivial discarded eigenvalues; the maximum-likelihood
    :math:`\hat\sigma^2` here divides by :math:`D - K`, counting the zero eigenvalues too.

    EM converges slowly when :math:`\sigma^2` is much smaller than the kept variances: the scale
    of :math:`W` inside the subspace then changes little per iteration. The closed form is exact
    and is the default.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)) @ [[3.0, 0.0, 0.0], [0.0, 2.0, 0.0]] + rng.normal(size=(500, 3))
    >>> ppca = ProbabilisticPCA(n_components=2).fit(X)
    >>> ppca.components_.shape
    (2, 3)
    >>> em = ProbabilisticPCA(2, method="em", random_state=0).fit(X)
    >>> bool(np.isclose(em.score(X), ppca.score(X)))
    True
    """

    def __init__(self, n_components, method="closed_form", max_iter=1000, tol=1e-8,
                 random_state=None):
        self.n_components = n_components
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    # ------------------------------------------------------------------------------------------
    def fit(self, X, y=None):
        r"""Fit :math:`\boldsymbol\mu`, :math:`W` and :math:`\sigma^2` by maximum likelihood.

        ``"closed_form"`` uses the thin SVD :math:`X_c = QSU^\top`, :math:`\lambda_j = s_j^2/N`.
        ``"em"`` alternates, with :math:`M = W^\top W + \sigma^2 I_K` and centred rows
        :math:`\mathbf x_n`,

        .. math::

            \text{E step:}\quad \mathbb E[\mathbf z_n] = M^{-1}W^\top\mathbf x_n, \qquad
            \textstyle\sum_n \mathbb E[\mathbf z_n\mathbf z_n^\top]
                = N\sigma^2 M^{-1} + \sum_n \mathbb E[\mathbf z_n]\mathbb E[\mathbf z_n]^\top,

            \text{M step:}\quad W \leftarrow \Big(\sum_n \mathbf x_n \mathbb E[\mathbf z_n]^\top\Big)
                \Big(\sum_n \mathbb E[\mathbf z_n\mathbf z_n^\top]\Big)^{-1}, \qquad
            \sigma^2 \leftarrow \frac{1}{ND}\sum_n \Big(\lVert\mathbf x_n\rVert^2
                - 2\,\mathbb E[\mathbf z_n]^\top W^\top \mathbf x_n
                + \operatorname{tr}\big(\mathbb E[\mathbf z_n\mathbf z_n^\top] W^\top W\big)\Big),

        each step raising the likelihood, until it rises by less than ``tol``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training data, one sample per row; finite values.
        y : None
            Ignored.

        Returns
        -------
        self : ProbabilisticPCA

        Raises
        ------
        ValueError
            If ``X`` is not a finite non-empty 2-D array, ``n_components`` is not an int in
            ``[1, min(n_samples, n_features) - 1]``, ``method`` is unknown, ``max_iter``/``tol``
            are not positive, or the discarded variance is zero (the data lie in a
            ``n_components``-dimensional subspace, where the density is degenerate).
        """
        X = as_2d_float(X, "X")
        n_samples, n_features = X.shape
        method = check_option(self.method, "method", _METHODS)
        if min(n_samples, n_features) < 2:
            raise ValueError(f"X has shape {X.shape}; probabilistic PCA needs at least 2 samples "
                             "and 2 features")
        k = _check_latent_dim(self.n_components, min(n_samples, n_features) - 1)
        mean = X.mean(axis=0)
        Xc = X - mean
        if method == "closed_form":
            W, sigma2 = _closed_form(Xc, k)
            history, n_iter = None, 0
        else:
            max_iter = check_int(self.max_iter, "max_iter")
            tol = check_positive(self.tol, "tol")
            W, sigma2, history = _em(Xc, k, max_iter, tol, np.random.default_rng(self.random_state))
            n_iter = len(history) - 1
        self.mean_ = mean
        self.components_ = np.ascontiguousarray(W.T)
        self.noise_variance_ = float(sigma2)
        self.n_components_ = k
        self.n_features_in_ = n_features
        self.n_iter_ = n_iter
        if history is None:
            history = [float(np.mean(self.score_samples(X)))]
        self.log_likelihood_ = np.asarray(history)
        return self

    def get_covariance(self) -> np.ndarray:
        r"""Model covariance :math:`C = WW^\top + \sigma^2 I_D`.

        Returns
        -------
        C : ndarray of shape (n_features, n_features)
        """
        W = self._fitted_W()
        return W @ W.T + self.noise_variance_ * np.eye(self.n_features_in_)

    def transform(self, X) -> np.ndarray:
        r"""Posterior mean of the codes,
        :math:`\mathbb E[\mathbf z\mid\mathbf x] = M^{-1}W^\top(\mathbf x - \boldsymbol\mu)`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            As :math:`\sigma^2 \to 0` these become the PCA codes rescaled by
            :math:`\lambda_k^{-1/2}`; for :math:`\sigma^2 > 0` they are shrunk towards 0.
        """
        X = as_fitted_input(self, X, fitted="components_", n_columns="n_features_in_")
        W = self.components_.T
        M = W.T @ W + self.noise_variance_ * np.eye(self.n_components_)
        return linalg.solve(M, W.T @ (X - self.mean_).T, assume_a="pos").T

    def score_samples(self, X) -> np.ndarray:
        r"""Log-density of each sample under :math:`\mathcal N(\boldsymbol\mu, WW^\top + \sigma^2 I)`.

        Uses :math:`O(DK^2)` work per call instead of :math:`O(D^3)`, through the Woodbury identity
        and the matrix determinant lemma with :math:`M = W^\top W + \sigma^2 I_K`:

        .. math::

            C^{-1} = \sigma^{-2}\big(I_D - W M^{-1} W^\top\big), \qquad
            \ln\lvert C\rvert = (D - K)\ln\sigma^2 + \ln\lvert M\rvert .

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
        """
        X = as_fitted_input(self, X, fitted="components_", n_columns="n_features_in_")
        return _log_density(X - self.mean_, self.components_.T, self.noise_variance_)

    def score(self, X, y=None) -> float:
        r"""Mean log-density :math:`\frac1N\sum_n \ln p(\mathbf x_n)` (scikit-learn's ``PCA.score``).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def _fitted_W(self) -> np.ndarray:
        if not hasattr(self, "components_"):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit(...) "
                             "before using it")
        return self.components_.T


# ----------------------------------------------------------------------------------------------
def _check_latent_dim(value, limit: int) -> int:
    """``n_components`` as an int in ``[1, limit]``, ``limit = min(n_samples, n_features) - 1``."""
    k = check_int(value, "n_components")
    if k > limit:
        raise ValueError(f"n_components={k} must be below min(n_samples, n_features)={limit + 1}, "
                         "so that some variance is left for the noise")
    return k


def _closed_form(Xc: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """Tipping--Bishop MLE of ``(W, sigma2)`` from centred data ``Xc`` of shape ``(N, D)``."""
    n_samples, n_features = Xc.shape
    _, s, U = _svd_top(Xc, min(n_samples, n_features))
    lam = s**2 / n_samples                                   # lecture eigenvalues, divisor N
    # eigenvalues beyond min(N, D) are zero, so the discarded sum is total minus kept
    sigma2 = (float(np.vdot(Xc, Xc)) / n_samples - lam[:k].sum()) / (n_features - k)
    _check_noise(sigma2, lam[0], k)
    W = U[:, :k] * np.sqrt(np.maximum(lam[:k] - sigma2, 0.0))
    return W, sigma2


def _check_noise(sigma2: float, scale: float, k: int) -> None:
    if not sigma2 > 1e-12 * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"n_components={k} leaves no variance for the noise (the data lie in a "
            f"{k}-dimensional subspace), so the Gaussian density is degenerate; use fewer components"
        )


def _em(Xc: np.ndarray, k: int, max_iter: int, tol: float, rng) -> tuple[np.ndarray, float, list]:
    """EM for PPCA (Tipping and Bishop 1999, sec. 3.2); returns ``W``, ``sigma2`` and the
    mean log-likelihood after each iteration."""
    n_samples, n_features = Xc.shape
    total = float(np.vdot(Xc, Xc))                          # sum_n ||x_n||^2
    W = rng.normal(scale=np.sqrt(total / (n_samples * n_features)), size=(n_features, k))
    sigma2 = total / (n_samples * n_features)
    _check_noise(sigma2, sigma2, k)
    history = [float(np.mean(_log_density(Xc, W, sigma2)))]
    for _ in range(max_iter):
        # E step: posterior moments of every code
        M = W.T @ W + sigma2 * np.eye(k)
        Minv = linalg.inv(M)
        Ez = Xc @ W @ Minv                                   # (N, K), row n is E[z_n]
        sum_Ezz = n_samples * sigma2 * Minv + Ez.T @ Ez      # (K, K)
        # M step
        XtEz = Xc.T @ Ez                                     # (D, K) = sum_n x_n E[z_n]^T
        W = linalg.solve(sum_Ezz, XtEz.T, assume_a="pos").T
        sigma2 = (total - 2.0 * np.vdot(XtEz, W) + np.vdot(sum_Ezz, W.T @ W)) / (n_samples * n_features)
        _check_noise(sigma2, total / n_samples, k)
        history.append(float(np.mean(_log_density(Xc, W, sigma2))))
        if history[-1] - history[-2] < tol:
            break
    else:
        warnings.warn(f"EM for probabilistic PCA stopped after max_iter={max_iter} iterations "
                      f"before the log-likelihood gain fell below tol={tol}", ConvergenceWarning,
                      stacklevel=3)
    return W, float(sigma2), history


def _log_density(Xc: np.ndarray, W: np.ndarray, sigma2: float) -> np.ndarray:
    """Log-density of centred rows ``Xc`` (N, D) under N(0, W W^T + sigma2 I), by Woodbury."""
    n_features, k = W.shape
    M = W.T @ W + sigma2 * np.eye(k)
    chol = linalg.cho_factor(M, lower=True)
    logdet = (n_features - k) * np.log(sigma2) + 2.0 * np.sum(np.log(np.diag(chol[0])))
    proj = Xc @ W                                            # (N, K)
    maha = (np.sum(Xc**2, axis=1) - np.sum(proj * linalg.cho_solve(chol, proj.T).T, axis=1)) / sigma2
    return -0.5 * (n_features * np.log(2.0 * np.pi) + logdet + maha)
