r"""Principal component analysis and the best low-rank approximation, both through the SVD.

The chapter ``chapters/01_pca.md`` derives everything implemented here. In the course's notation,
centred data :math:`X \in \mathbb{R}^{N \times D}` (one sample per row) is approximated as

.. math::

    X \approx Z U^\top, \qquad Z = X U,

with :math:`U \in \mathbb{R}^{D \times K}` an orthonormal basis (:math:`U^\top U = I_K`) and
:math:`Z \in \mathbb{R}^{N \times K}` the codes. (The lecture writes the same factorization
transposed, :math:`X^\top \approx U Z^\top`, with one sample per column; the letters keep their
roles: :math:`U` is the basis, :math:`Z` the codes.) The squared reconstruction error
:math:`\lVert X - Z U^\top \rVert_F^2` is minimised by the top :math:`K` right singular vectors
of the thin SVD

.. math::

    X = Q S U^\top, \qquad Q^\top Q = I, \quad U^\top U = I,
    \quad S = \operatorname{diag}(s_1 \ge s_2 \ge \dots \ge 0),

and the minimum equals the sum of the dropped squared singular values,
:math:`\sum_{k > K} s_k^2` (Eckart--Young). The right singular vectors are also the eigenvectors of
the empirical covariance :math:`\Sigma = \frac{1}{N} X^\top X` (lecture convention, divisor
:math:`N`), with eigenvalues :math:`\lambda_k = s_k^2 / N`.

Conventions fixed by this module
--------------------------------
* **Variance.** The maths uses the lecture's covariance with divisor :math:`N`. The fitted attribute
  ``PCA.explained_variance_``, however, follows scikit-learn and holds the *unbiased* variances
  :math:`s_k^2 / (N - 1)`, so that it compares directly with
  ``sklearn.decomposition.PCA.explained_variance_``. The lecture's eigenvalues are recovered as
  :math:`\lambda_k = \frac{N-1}{N}\,\texttt{explained\_variance\_}[k]`. The ratio
  ``explained_variance_ratio_`` does not depend on the divisor.
* **Signs.** Singular vectors are only defined up to sign. Every basis vector returned here (rows of
  ``PCA.components_``, columns of ``U`` from :func:`truncated_svd`) is flipped so that its entry of
  largest absolute value is positive (the first such entry on a tie); the matching code or left
  singular vector is flipped with it, so products such as :math:`Q S U^\top` are unchanged. Both
  PCA solvers apply the same rule, which makes results reproducible and lets the two solvers agree.
  (scikit-learn's ``PCA`` happens to use the same rule.)

Public API
----------
``PCA``
    Estimator with the ``"svd"`` (default, numerically preferred) and ``"eig"`` solvers.
``truncated_svd(X, rank) -> (Q, s, U)``
    The top ``rank`` singular triplets, in the course's notation :math:`X \approx Q S U^\top`.
``low_rank_approximation(X, rank)``
    The best rank-``rank`` approximation :math:`Q_k S_k U_k^\top` in Frobenius norm (no centring).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import as_2d_float, as_fitted_input, check_option

__all__ = ["PCA", "truncated_svd", "low_rank_approximation"]

_SOLVERS = ("svd", "eig")


def _check_rank(value, name: str, n_samples: int, n_features: int) -> int:
    """Return ``value`` as an int after checking ``1 <= value <= min(n_samples, n_features)``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(
            f"{name} must be an int in [1, min(n_samples, n_features)]; got {value!r}"
        )
    value = int(value)
    limit = min(n_samples, n_features)
    if value < 1:
        raise ValueError(f"{name}={value} must be at least 1")
    if value > limit:
        raise ValueError(
            f"{name}={value} is larger than min(n_samples, n_features)={limit}"
        )
    return value


def _flip_signs(U: np.ndarray) -> np.ndarray:
    """Return the signs (+1/-1, shape ``(K,)``) that make each column's largest-|.| entry positive."""
    rows = np.argmax(np.abs(U), axis=0)
    signs = np.sign(U[rows, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0  # an all-zero column keeps its (meaningless) sign
    return signs


def _svd_top(X: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD of an already validated ``X``, truncated to ``rank`` and sign-fixed."""
    Q, s, Ut = np.linalg.svd(X, full_matrices=False)
    Q, s, U = Q[:, :rank], s[:rank], Ut[:rank].T
    signs = _flip_signs(U)
    return Q * signs, s, U * signs


def truncated_svd(X, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Top ``rank`` singular triplets of ``X`` in the course's notation :math:`X = Q S U^\top`.

    Computes the thin SVD (``full_matrices=False``) and keeps the ``rank`` largest singular values

    .. math::

        X_k = Q_k S_k U_k^\top = \sum_{j=1}^{k} s_j\, q_j u_j^\top,

    with :math:`Q_k^\top Q_k = U_k^\top U_k = I_k` and :math:`s_1 \ge \dots \ge s_k \ge 0`. The data
    are **not** centred. Each column :math:`u_j` is signed so that its entry of largest absolute
    value is positive, and :math:`q_j` is flipped with it.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Matrix to factorise; finite values only.
    rank : int
        Number of singular triplets :math:`k`, with ``1 <= rank <= min(n_samples, n_features)``.

    Returns
    -------
    Q : ndarray of shape (n_samples, rank)
        Left singular vectors (orthonormal columns).
    s : ndarray of shape (rank,)
        Singular values in decreasing order.
    U : ndarray of shape (n_features, rank)
        Right singular vectors (orthonormal columns).

    Raises
    ------
    ValueError
        If ``X`` is not a finite non-empty 2-D array, or ``rank`` is not an int in
        ``[1, min(n_samples, n_features)]``.

    See Also
    --------
    low_rank_approximation : The product :math:`Q_k S_k U_k^\top`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> Q, s, U = truncated_svd(X, 1)
    >>> s
    array([3.])
    >>> U.ravel()
    array([1., 0.])
    """
    X = as_2d_float(X, "X")
    rank = _check_rank(rank, "rank", *X.shape)
    return _svd_top(X, rank)


def low_rank_approximation(X, rank: int) -> np.ndarray:
    r"""Best rank-``rank`` approximation of ``X`` in Frobenius norm (Eckart--Young), without centring.

    .. math::

        X_k = \operatorname*{arg\,min}_{\operatorname{rank}(B) \le k} \lVert X - B \rVert_F
            = Q_k S_k U_k^\top,
        \qquad
        \lVert X - X_k \rVert_F^2 = \sum_{j > k} s_j^2,

    where :math:`X = Q S U^\top` is the thin SVD (see :func:`truncated_svd`).

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Matrix to approximate; finite values only.
    rank : int
        Target rank :math:`k`, with ``1 <= rank <= min(n_samples, n_features)``.

    Returns
    -------
    X_k : ndarray of shape (n_samples, n_features)
        The approximation :math:`Q_k S_k U_k^\top`; its rank is ``rank`` whenever
        :math:`s_k > 0`. To get the factors instead, call :func:`truncated_svd`.

    Raises
    ------
    ValueError
        If ``X`` is not a finite non-empty 2-D array, or ``rank`` is not an int in
        ``[1, min(n_samples, n_features)]``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.diag([3.0, 2.0, 1.0])
    >>> low_rank_approximation(X, 2)
    array([[3., 0., 0.],
           [0., 2., 0.],
           [0., 0., 0.]])
    >>> float(np.linalg.norm(X - low_rank_approximation(X, 2)))  # sqrt(s_3^2)
    1.0
    """
    Q, s, U = truncated_svd(X, rank)
    return (Q * s) @ U.T


class PCA:
    r"""Principal component analysis: project centred data onto its top-variance directions.

    With :math:`\mu = \frac{1}{N}\sum_n x_n` and centred data :math:`X_c = X - \mathbf{1}\mu^\top`,
    PCA keeps the orthonormal basis :math:`U \in \mathbb{R}^{D \times K}` minimising the squared
    reconstruction error :math:`\lVert X_c - X_c U U^\top \rVert_F^2`. The solution is the top
    :math:`K` right singular vectors of :math:`X_c = Q S U^\top`, equivalently the top :math:`K`
    eigenvectors of the lecture's covariance :math:`\Sigma = \frac{1}{N} X_c^\top X_c`, whose
    eigenvalues are :math:`\lambda_k = s_k^2 / N`. The minimum error is :math:`\sum_{k>K} s_k^2`.

    Parameters
    ----------
    n_components : int
        Number of components :math:`K`, with ``1 <= n_components <= min(n_samples, n_features)``
        (checked in :meth:`fit`).
    solver : {"svd", "eig"}, default "svd"
        ``"svd"``: thin SVD of :math:`X_c` (``numpy.linalg.svd``, ``full_matrices=False``).
        ``"eig"``: eigendecomposition of :math:`\Sigma` (``numpy.linalg.eigh``), eigenvalues sorted
        decreasingly and clipped at zero. Forming :math:`X_c^\top X_c` squares the condition number,
        so ``"eig"`` loses small variances (relative accuracy about
        :math:`\varepsilon\, s_1^2 / s_k^2` instead of :math:`\varepsilon\, s_1 / s_k`); prefer
        ``"svd"`` unless ``n_samples`` is much larger than ``n_features`` and speed matters.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Feature means :math:`\mu` of the training data.
    components_ : ndarray of shape (n_components, n_features)
        Principal directions :math:`U^\top` (orthonormal rows), by decreasing variance. Each row is
        signed so that its entry of largest absolute value is positive.
    explained_variance_ : ndarray of shape (n_components,)
        Variance along each component **with divisor** :math:`N - 1`, i.e. :math:`s_k^2/(N-1)`, the
        same definition as scikit-learn. The lecture's eigenvalues are
        :math:`\lambda_k = s_k^2/N = \frac{N-1}{N}\,\texttt{explained\_variance\_}[k]`.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        :math:`s_k^2 / \sum_{j=1}^{\min(N,D)} s_j^2 = s_k^2 / \lVert X_c \rVert_F^2`, the fraction of
        the total variance carried by each component (all zeros when the data are constant).
    singular_values_ : ndarray of shape (n_components,)
        Singular values :math:`s_k` of :math:`X_c`, decreasing (``"eig"``: :math:`\sqrt{N\lambda_k}`).
    n_components_ : int
        :math:`K`.
    n_features_in_ : int
        :math:`D`, the number of features seen in :meth:`fit`.
    n_samples_ : int
        :math:`N`, the number of training samples.

    Notes
    -----
    Fitting needs at least two samples, since the variance with divisor :math:`N - 1` is undefined
    for :math:`N = 1`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3)) * [3.0, 1.0, 0.1]
    >>> pca = PCA(n_components=2).fit(X)
    >>> pca.components_.shape
    (2, 3)
    >>> np.allclose(pca.components_ @ pca.components_.T, np.eye(2))
    True
    >>> Z = pca.transform(X)                      # codes, shape (100, 2)
    >>> X_hat = pca.inverse_transform(Z)          # mean_ + Z U^T
    >>> err = np.sum((X - X_hat) ** 2)            # = dropped s_3^2 (Eckart-Young)
    >>> s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    >>> bool(np.isclose(err, s[2] ** 2))
    True
    >>> np.allclose(PCA(2, solver="eig").fit(X).components_, pca.components_)
    True
    """

    def __init__(self, n_components, solver="svd"):
        self.n_components = n_components
        self.solver = solver

    def fit(self, X, y=None):
        r"""Compute the mean and the top ``n_components`` principal directions of ``X``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training data, one sample per row; finite values, at least two samples.
        y : None
            Ignored; present for scikit-learn compatibility.

        Returns
        -------
        self : PCA
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` is not a finite non-empty 2-D array or has fewer than two rows, if
            ``n_components`` is not an int in ``[1, min(n_samples, n_features)]``, or if ``solver``
            is unknown.
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None) -> np.ndarray:
        r"""Fit on ``X`` and return its codes :math:`Z = X_c U`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            Codes of the training data (for ``"svd"`` computed as :math:`Q_K S_K`, which equals
            :math:`X_c U_K`).
        """
        return self._fit(X)

    def transform(self, X) -> np.ndarray:
        r"""Project ``X`` onto the principal directions: :math:`Z = (X - \mathbf{1}\mu^\top)\, U`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Data with the same number of features as in :meth:`fit`.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            Codes.

        Raises
        ------
        ValueError
            If the estimator is not fitted, or ``X`` is not a finite 2-D array with
            ``n_features_in_`` columns.
        """
        X = as_fitted_input(self, X, fitted="components_", n_columns="n_features_in_")
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, Z) -> np.ndarray:
        r"""Map codes back to data space: :math:`\hat X = Z U^\top + \mathbf{1}\mu^\top`.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_components)
            Codes, e.g. from :meth:`transform`.

        Returns
        -------
        X_hat : ndarray of shape (n_samples, n_features)
            Reconstruction; equal to the input of :meth:`transform` when
            ``n_components`` reaches the rank of the centred data.

        Raises
        ------
        ValueError
            If the estimator is not fitted, or ``Z`` is not a finite 2-D array with
            ``n_components_`` columns.
        """
        Z = as_fitted_input(self, Z, fitted="components_", n_columns="n_components_", name="Z")
        return Z @ self.components_ + self.mean_

    # ------------------------------------------------------------------------------------------
    def _fit(self, X) -> np.ndarray:
        """Validate, fit, set the attributes and return the training codes."""
        X = as_2d_float(X, "X")
        n_samples, n_features = X.shape
        solver = check_option(self.solver, "solver", _SOLVERS)
        if n_samples < 2:
            raise ValueError(
                f"X has {n_samples} sample; PCA needs at least 2 samples to estimate variances"
            )
        k = _check_rank(self.n_components, "n_components", n_samples, n_features)

        mean = X.mean(axis=0)
        Xc = X - mean
        total_ss = float(np.vdot(Xc, Xc))  # ||X_c||_F^2 = sum of all s_j^2

        if solver == "svd":
            Q, s, U = _svd_top(Xc, k)
            Z = Q * s
        else:
            cov = (Xc.T @ Xc) / n_samples  # lecture covariance, divisor N
            eigvals, eigvecs = np.linalg.eigh(cov)
            lam = np.clip(eigvals[::-1][:k], 0.0, None)
            U = eigvecs[:, ::-1][:, :k]
            U = U * _flip_signs(U)
            s = np.sqrt(n_samples * lam)
            Z = Xc @ U

        self.mean_ = mean
        self.components_ = np.ascontiguousarray(U.T)
        self.singular_values_ = s
        self.explained_variance_ = s**2 / (n_samples - 1)
        if total_ss > 0:
            self.explained_variance_ratio_ = s**2 / total_ss
        else:
            self.explained_variance_ratio_ = np.zeros(k)
        self.n_components_ = k
        self.n_features_in_ = n_features
        self.n_samples_ = n_samples
        return Z
