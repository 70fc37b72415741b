r"""Matrix completion by alternating least squares: the Netflix problem.

Derived in ``chapters/02_matrix_completion.md``.

A rating matrix :math:`R` of ``n_users`` x ``n_items`` is observed only on a small set
:math:`\Omega` of (user, item) pairs. The latent factor model explains each rating by an inner
product of a user vector :math:`u_i \in \mathbb{R}^K` and an item vector :math:`z_j \in
\mathbb{R}^K`, :math:`R_{ij} \approx u_i^\top z_j` (so :math:`R \approx U Z^\top`), fitted by
minimising the ridge-regularised squared error over the observed entries only,

.. math::

    J(U, Z) = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - u_i^\top z_j)^2
              + \tfrac{\lambda}{2} \Big( \sum_i \lVert u_i \rVert^2
                                        + \sum_j \lVert z_j \rVert^2 \Big).

With :math:`Z` fixed, :math:`J` separates into one ridge regression per user (a linear regression
in disguise),

.. math::

    u_i = \Big( \sum_{j \in \Omega_i} z_j z_j^\top + \lambda I \Big)^{-1}
          \sum_{j \in \Omega_i} R_{ij} z_j,

and symmetrically for the items; alternating least squares (ALS) repeats the two exact half-steps,
so :math:`J` never increases. The ridge term is what keeps a user with fewer than :math:`K` ratings
(whose :math:`\sum_j z_j z_j^\top` is singular) well defined.

With ``biases=True`` the model is :math:`R_{ij} \approx \mu + b_i + c_j + u_i^\top z_j`, where
:math:`\mu` is the mean of the observed ratings (fixed, not regularised) and the biases are
regularised by the same :math:`\lambda`:

.. math::

    J = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - \mu - b_i - c_j - u_i^\top z_j)^2
        + \tfrac{\lambda}{2} \Big( \sum_i (\lVert u_i \rVert^2 + b_i^2)
                                  + \sum_j (\lVert z_j \rVert^2 + c_j^2) \Big).

They are fitted inside the same sweeps by augmenting the factor vectors with a constant 1: the user
step solves for :math:`(u_i, b_i)` with item features :math:`(z_j, 1)` and targets
:math:`R_{ij} - \mu - c_j`, the item step for :math:`(z_j, c_j)` with user features
:math:`(u_i, 1)` and targets :math:`R_{ij} - \mu - b_i`. Each half-step is still an exact ridge
solve of :math:`J`, so :math:`J` still never increases.

Implementation: each half-step solves all per-user (per-item) ridge regressions in one call of a
compiled kernel (``solutions/_als_kernels.py``, Numba), with no Python loop over users or items:
for every row it accumulates the upper triangle of :math:`\sum_j z_j z_j^\top` and of
:math:`\sum_j R_{ij} z_j` from the row's stored entries and solves the system by Cholesky in a
``K x K`` scratch array, so memory does not grow with the data. Where Numba cannot be imported
(in a browser), the same solves run in plain NumPy (``solutions/_als_numpy.py``), batched: the
systems of rows of similar length are stacked and solved together. A row with fewer ratings than
unknowns (most movies) is solved in the dual form
:math:`u_i = Z_i^\top (Z_i Z_i^\top + \lambda I)^{-1} r_i`, a system of its size instead of
:math:`K \times K`, with the same solution up to rounding.

``reg = 0`` (plain least squares) is allowed when every user and item with a rating has at least
as many ratings as unknowns; otherwise, or if a system is exactly singular, :meth:`ALS.fit` raises
``ValueError`` asking for ``reg > 0``.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from solutions._validation import (
    as_1d_float,
    as_2d_float,
    check_consistent_length,
    check_int,
    check_is_fitted,
    check_positive,
)

try:
    from solutions._als_kernels import pair_dot, ridge_rows
except ImportError:  # no Numba (a browser's Pyodide): the same results in plain NumPy, slower
    from solutions._als_numpy import (  # type: ignore[assignment]  # same signatures, no Numba
        pair_dot,
        ridge_rows,
    )

__all__ = ["ALS", "objective", "rmse", "train_test_split_ratings"]

# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------

def _type_name(x) -> str:
    cls = type(x)
    module = cls.__module__.split(".")[0]
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _n_duplicates(X) -> int:
    """Number of stored entries of ``X`` that repeat an earlier (row, column) position."""
    if X.format in ("csr", "csc"):
        if X.has_canonical_format:
            return 0
    elif X.format != "coo" or X.has_canonical_format:
        return 0  # lil, dok, dia, bsr cannot store one position twice
    coo = X.tocoo()
    keys = coo.row.astype(np.int64) * X.shape[1] + coo.col
    return int(keys.size - np.unique(keys).size)


def _check_ratings(ratings, name: str = "ratings", shape=None) -> sp.csr_matrix:
    """Validate a sparse rating matrix; return it as a float64 CSR matrix (not to be modified)."""
    if not sp.issparse(ratings):
        raise ValueError(f"{name} must be a scipy.sparse matrix of shape (n_users, n_items); "
                         f"got {_type_name(ratings)}")
    if ratings.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_users, n_items); "
                         f"got shape {ratings.shape}")
    if shape is not None and tuple(ratings.shape) != tuple(shape):
        raise ValueError(f"{name} must have the fitted shape (n_users, n_items) = {tuple(shape)}; "
                         f"got {tuple(ratings.shape)}")
    n_dup = _n_duplicates(ratings)
    if n_dup:
        raise ValueError(f"{name} stores {n_dup} duplicate (user, item) entr(y/ies); each observed "
                         "rating must be stored once (scipy would add duplicates together)")
    R = as_2d_float(ratings, name, allow_sparse=True)
    if R.nnz == 0:
        raise ValueError(f"{name} has no observed (stored) entries; at least one rating is needed")
    return R


def _check_indices(idx, name: str, n: int, what: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(idx))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n_pairs,); got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.intp)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must contain integer {what} indices; got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} index(es) out of range [0, {n}) for the "
                         f"{n} {what}s of the fitted model, e.g. {arr[bad][0]}")
    return arr.astype(np.intp, copy=False)


# --------------------------------------------------------------------------------------------
# Building blocks (the loops are compiled: solutions/_als_kernels.py)
# --------------------------------------------------------------------------------------------


def _ridge_rows(M: sp.csr_matrix, targets: np.ndarray, X: np.ndarray, reg: float,
                what: str) -> np.ndarray:
    r"""Solve every row's ridge regression of one ALS half-step (see :mod:`solutions._als_kernels`).

    Row ``r`` of the result is :math:`w_r = (\sum_{s \in \Omega_r} x_s x_s^\top +
    \lambda I)^{-1} \sum_{s \in \Omega_r} y_{rs} x_s`, where :math:`\Omega_r` is the set of
    stored columns of row ``r`` of ``M`` and ``targets`` the :math:`y_{rs}` in ``M``'s storage
    order. Rows with no stored entry get the zero vector.

    Parameters
    ----------
    M : scipy.sparse.csr_matrix of shape (n_rows, n_other)
        The pattern of observed entries (its values are not read).
    targets : ndarray of shape (M.nnz,)
    X : ndarray of shape (n_other, D)
        Feature vector :math:`x_s` of every column.
    reg : float
        :math:`\lambda \ge 0`.
    what : str
        ``"user"`` or ``"item"``, for the error message.

    Returns
    -------
    ndarray of shape (n_rows, D)

    Raises
    ------
    ValueError
        If a system is singular (possible only when ``reg = 0``).
    """
    W = np.empty((M.shape[0], X.shape[1]))
    bad = ridge_rows(M.indptr, M.indices, targets, np.ascontiguousarray(X), float(reg), W)
    if bad >= 0:
        raise ValueError(
            f"the normal equations of {what} {bad} are singular with reg={reg!r} (the factors "
            f"of its rated {'items' if what == 'user' else 'users'} are linearly dependent); "
            + ("use reg > 0" if reg == 0 else "use a larger reg")
        )
    return W


def _objective_value(data, rows, cols, U, Z, reg, mu=0.0, b=None, c=None) -> float:
    """The regularised objective J on pre-validated arrays (see :func:`objective`)."""
    pred = pair_dot(U, Z, rows, cols)
    if b is not None:
        pred += mu + b[rows] + c[cols]
    res = data - pred
    penalty = np.sum(U * U) + np.sum(Z * Z)
    if b is not None:
        penalty += b @ b + c @ c
    return float(0.5 * (res @ res) + 0.5 * reg * penalty)


def _rows_of(R: sp.csr_matrix) -> np.ndarray:
    return np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

def objective(ratings, user_factors, item_factors, reg, *, global_mean=0.0, user_bias=None,
              item_bias=None) -> float:
    r"""Regularised squared error of a latent factor model on the observed ratings.

    .. math::

        J = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - \mu - b_i - c_j - u_i^\top z_j)^2
            + \tfrac{\lambda}{2} \Big( \sum_i (\lVert u_i \rVert^2 + b_i^2)
                                      + \sum_j (\lVert z_j \rVert^2 + c_j^2) \Big)

    where :math:`\Omega` is the set of stored entries of ``ratings``. Without biases
    (``user_bias`` and ``item_bias`` left as ``None``, ``global_mean`` 0) this is
    :math:`\tfrac12 \sum_\Omega (R_{ij} - u_i^\top z_j)^2 + \tfrac{\lambda}{2}(\lVert U
    \rVert_F^2 + \lVert Z \rVert_F^2)`. :attr:`ALS.loss_history_` records this value after each
    sweep.

    Parameters
    ----------
    ratings : scipy.sparse matrix of shape (n_users, n_items)
        Its stored entries (including explicitly stored zeros) are the observed ratings.
    user_factors : array_like of shape (n_users, n_factors)
        :math:`U`, one row :math:`u_i` per user.
    item_factors : array_like of shape (n_items, n_factors)
        :math:`Z`, one row :math:`z_j` per item.
    reg : float
        :math:`\lambda \ge 0`.
    global_mean : float, default 0.0
        :math:`\mu`, not regularised.
    user_bias : array_like of shape (n_users,), optional
        :math:`b`; ``None`` means all zeros.
    item_bias : array_like of shape (n_items,), optional
        :math:`c`; ``None`` means all zeros.

    Returns
    -------
    float

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> R = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))  # two observed ratings
    >>> objective(R, np.ones((2, 1)), np.ones((2, 1)), reg=0.0)
    0.5
    """
    R = _check_ratings(ratings)
    n_users, n_items = R.shape
    U = as_2d_float(user_factors, "user_factors")
    Z = as_2d_float(item_factors, "item_factors")
    if U.shape[0] != n_users:
        raise ValueError(f"user_factors must have n_users = {n_users} rows; got shape {U.shape}")
    if Z.shape[0] != n_items:
        raise ValueError(f"item_factors must have n_items = {n_items} rows; got shape {Z.shape}")
    if U.shape[1] != Z.shape[1]:
        raise ValueError(f"user_factors and item_factors must have the same number of factors; "
                         f"got {U.shape[1]} and {Z.shape[1]}")
    reg = check_positive(reg, "reg", strict=False)
    mu = float(as_1d_float([global_mean], "global_mean")[0])
    b = np.zeros(n_users) if user_bias is None else as_1d_float(user_bias, "user_bias")
    c = np.zeros(n_items) if item_bias is None else as_1d_float(item_bias, "item_bias")
    if b.shape != (n_users,):
        raise ValueError(f"user_bias must have shape ({n_users},); got {b.shape}")
    if c.shape != (n_items,):
        raise ValueError(f"item_bias must have shape ({n_items},); got {c.shape}")
    return _objective_value(R.data, _rows_of(R), R.indices, U, Z, reg, mu, b, c)


def rmse(y_true, y_pred) -> float:
    r"""Root mean squared error :math:`\sqrt{\frac1n \sum_n (y_n - \hat y_n)^2}`.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Observed ratings.
    y_pred : array_like of shape (n,)
        Predicted ratings.

    Returns
    -------
    float

    Examples
    --------
    >>> rmse([1.0, 2.0], [1.0, 4.0])
    1.4142135623730951
    """
    y_true = as_1d_float(y_true, "y_true")
    y_pred = as_1d_float(y_pred, "y_pred")
    check_consistent_length(y_true=y_true, y_pred=y_pred)
    return float(np.sqrt(np.mean((y_true - y_pred) ** 2)))


def train_test_split_ratings(ratings, test_size=0.2, random_state=None):
    """Split the observed entries of a sparse rating matrix at random into train and test.

    Every stored entry (an explicitly stored 0 included) goes to exactly one of the two outputs,
    chosen uniformly at random; both keep the full shape, so a model fitted on ``train`` can be
    scored on ``test``. The split is not stratified: a user (item) may end up with no training
    ratings, in which case ALS gives it zero factors (and, with biases, a zero bias).

    Parameters
    ----------
    ratings : scipy.sparse matrix of shape (n_users, n_items)
        Stored entries are the observed ratings.
    test_size : float in (0, 1) or int, default 0.2
        Fraction of the observed entries to hold out (rounded up), or their number.
    random_state : int, numpy.random.Generator or None, default None

    Returns
    -------
    train : scipy.sparse.csr_matrix of shape (n_users, n_items)
    test : scipy.sparse.csr_matrix of shape (n_users, n_items)

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> R = sp.random(50, 40, density=0.2, format="csr", random_state=0)
    >>> train, test = train_test_split_ratings(R, test_size=0.25, random_state=0)
    >>> train.nnz + test.nnz == R.nnz, test.nnz
    (True, 100)
    """
    R = _check_ratings(ratings)
    nnz = R.nnz
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, numbers.Real):
        raise ValueError(f"test_size must be a float in (0, 1) or an int; got {test_size!r}")
    if isinstance(test_size, numbers.Integral):
        n_test = int(test_size)
    else:
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1) when a float; got {test_size!r}")
        n_test = int(np.ceil(test_size * nnz))
    if not 1 <= n_test <= nnz - 1:
        raise ValueError(f"test_size={test_size!r} must leave at least one of the {nnz} observed "
                         f"ratings in each of train and test; it asks for {n_test} test entries")
    rng = np.random.default_rng(random_state)
    coo = R.tocoo()
    in_test = np.zeros(nnz, dtype=bool)
    in_test[rng.permutation(nnz)[:n_test]] = True

    def pick(mask):
        return sp.csr_matrix((coo.data[mask], (coo.row[mask], coo.col[mask])), shape=R.shape)

    return pick(~in_test), pick(in_test)


# --------------------------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------------------------

class ALS:
    r"""Latent factor model :math:`R \approx U Z^\top` fitted by alternating least squares.

    Minimises, over the observed set :math:`\Omega` (the stored entries of ``ratings``),

    .. math::

        J = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - u_i^\top z_j)^2
            + \tfrac{\lambda}{2} \Big( \sum_i \lVert u_i \rVert^2 + \sum_j \lVert z_j \rVert^2 \Big)

    by alternating the exact ridge solutions

    .. math::

        u_i = \Big( \sum_{j \in \Omega_i} z_j z_j^\top + \lambda I \Big)^{-1}
              \sum_{j \in \Omega_i} R_{ij} z_j, \qquad
        z_j = \Big( \sum_{i \in \Omega^j} u_i u_i^\top + \lambda I \Big)^{-1}
              \sum_{i \in \Omega^j} R_{ij} u_i,

    so that :math:`J` never increases. With ``biases=True`` the model is
    :math:`R_{ij} \approx \mu + b_i + c_j + u_i^\top z_j`: :math:`\mu` is the mean of the observed
    ratings (fixed, not regularised); :math:`u_i, z_j, b_i, c_j` all carry the penalty
    :math:`\tfrac{\lambda}{2}(\cdot)^2`; each half-step solves for the augmented vectors
    :math:`(u_i, b_i)` (item features :math:`(z_j, 1)`, targets :math:`R_{ij} - \mu - c_j`) and
    then :math:`(z_j, c_j)` (user features :math:`(u_i, 1)`, targets :math:`R_{ij} - \mu - b_i`).
    See :func:`objective`.

    Parameters
    ----------
    n_factors : int
        :math:`K \ge 1`, the number of latent factors.
    reg : float
        :math:`\lambda \ge 0`. With ``reg > 0`` every system is positive definite and a user
        (item) with fewer than ``n_factors`` ratings is fine. ``reg = 0`` (plain least squares) is
        allowed only if every user and item with a rating has at least ``n_factors`` of them
        (``n_factors + 1`` with biases), otherwise :meth:`fit` raises ``ValueError``; it also
        raises if a system turns out exactly singular. Users and items without any rating get
        zero factors (and zero bias) for every ``reg``.
    n_iters : int
        Number of sweeps (a user step then an item step), ``>= 1``.
    random_state : int, numpy.random.Generator or None, default None
        Seeds the initial item factors: ``numpy.random.default_rng(random_state).normal(0.0,
        1 / sqrt(n_factors), size=(n_items, n_factors))`` (so that :math:`\lVert z_j \rVert
        \approx 1`). The initial user factors are never used: the first half-step computes them.
    biases : bool, default False
        Whether to add a global mean and user and item biases.

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_factors)
        :math:`U`.
    item_factors_ : ndarray of shape (n_items, n_factors)
        :math:`Z`.
    loss_history_ : ndarray of shape (n_iters,)
        The objective :math:`J` after each sweep (non-increasing).
    global_mean_ : float
        :math:`\mu`; only with ``biases=True``.
    user_bias_ : ndarray of shape (n_users,)
        :math:`b`; only with ``biases=True``.
    item_bias_ : ndarray of shape (n_items,)
        :math:`c`; only with ``biases=True``.
    n_users_, n_items_ : int
        Shape of the training matrix.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> rng = np.random.default_rng(0)
    >>> full = rng.normal(size=(30, 2)) @ rng.normal(size=(2, 20))      # rank 2
    >>> mask = rng.random(full.shape) < 0.6
    >>> R = sp.csr_matrix((full[mask], np.nonzero(mask)), shape=full.shape)
    >>> model = ALS(n_factors=2, reg=1e-3, n_iters=50, random_state=0).fit(R)
    >>> bool(rmse(full.ravel(), model.predict_all().ravel()) < 0.05)
    True
    """

    def __init__(self, n_factors, reg, n_iters, random_state=None, biases=False):
        self.n_factors = n_factors
        self.reg = reg
        self.n_iters = n_iters
        self.random_state = random_state
        self.biases = biases

    # ---------------------------------------------------------------------------------- fit
    def fit(self, ratings):
        """Fit the factors (and biases) to the observed entries of ``ratings``.

        Parameters
        ----------
        ratings : scipy.sparse matrix of shape (n_users, n_items)
            Its stored entries are the observed ratings: the sparsity structure, not the values,
            says what was observed, so an explicitly stored 0 is a rating of 0. Duplicate entries
            for one (user, item) pair are refused.

        Returns
        -------
        self : ALS
        """
        K = check_int(self.n_factors, "n_factors", 1)
        n_iters = check_int(self.n_iters, "n_iters", 1)
        reg = check_positive(self.reg, "reg", strict=False)
        if not isinstance(self.biases, (bool, np.bool_)):
            raise ValueError(f"biases must be True or False; got {self.biases!r}")
        biases = bool(self.biases)
        R = _check_ratings(ratings)
        n_users, n_items = R.shape
        Rt = R.T.tocsr()  # items x users, same stored entries
        D = K + biases
        if reg == 0:
            for what, M in (("user", R), ("item", Rt)):
                counts = np.diff(M.indptr)
                bad = np.flatnonzero((counts > 0) & (counts < D))
                if bad.size:
                    raise ValueError(
                        f"reg=0 leaves the normal equations singular: {bad.size} {what}(s) have "
                        f"fewer ratings than the {D} unknowns of their least-squares problem "
                        f"(e.g. {what} {bad[0]} has {counts[bad[0]]}); use reg > 0"
                    )

        rng = np.random.default_rng(self.random_state)
        Z = rng.normal(0.0, 1.0 / np.sqrt(K), size=(n_items, K))
        U = np.zeros((n_users, K))
        mu = float(R.data.mean()) if biases else 0.0
        b = np.zeros(n_users) if biases else None
        c = np.zeros(n_items) if biases else None

        rows = _rows_of(R)
        ones_items, ones_users = np.ones((n_items, 1)), np.ones((n_users, 1))

        losses = np.empty(n_iters)
        for sweep in range(n_iters):
            if biases:
                W = _ridge_rows(R, R.data - mu - c[R.indices], np.hstack([Z, ones_items]), reg,
                                "user")
                U, b = np.ascontiguousarray(W[:, :K]), W[:, K].copy()
                W = _ridge_rows(Rt, Rt.data - mu - b[Rt.indices], np.hstack([U, ones_users]),
                                reg, "item")
                Z, c = np.ascontiguousarray(W[:, :K]), W[:, K].copy()
            else:
                U = _ridge_rows(R, R.data, Z, reg, "user")
                Z = _ridge_rows(Rt, Rt.data, U, reg, "item")
            losses[sweep] = _objective_value(R.data, rows, R.indices, U, Z, reg, mu, b, c)

        self.user_factors_ = U
        self.item_factors_ = Z
        self.loss_history_ = losses
        self.n_users_, self.n_items_ = n_users, n_items
        if biases:
            self.global_mean_ = mu
            self.user_bias_ = b
            self.item_bias_ = c
        else:  # a refit without biases must not keep the biases of an earlier fit
            for name in ("global_mean_", "user_bias_", "item_bias_"):
                self.__dict__.pop(name, None)
        self._seen_indptr = R.indptr.copy()
        self._seen_indices = R.indices.copy()
        return self

    # ------------------------------------------------------------------------------ predict
    def _has_biases(self) -> bool:
        return hasattr(self, "user_bias_")

    def predict(self, user_idx, item_idx):
        r"""Predicted ratings :math:`\hat R_{ij} = u_i^\top z_j` (:math:`+ \mu + b_i + c_j` with
        biases) for the pairs ``(user_idx[n], item_idx[n])``.

        Parameters
        ----------
        user_idx : array_like of int, shape (n_pairs,)
            Row indices in ``[0, n_users)``.
        item_idx : array_like of int, shape (n_pairs,)
            Column indices in ``[0, n_items)``.

        Returns
        -------
        ndarray of shape (n_pairs,)
            Not clipped to the rating scale. A scalar pair gives an array of shape (1,).
        """
        check_is_fitted(self, "user_factors_")
        u = _check_indices(user_idx, "user_idx", self.n_users_, "user")
        i = _check_indices(item_idx, "item_idx", self.n_items_, "item")
        check_consistent_length(user_idx=u, item_idx=i)
        pred = pair_dot(self.user_factors_, self.item_factors_, u, i)
        if self._has_biases():
            pred += self.global_mean_ + self.user_bias_[u] + self.item_bias_[i]
        return pred

    def predict_all(self):
        r"""The completed matrix :math:`\hat R = U Z^\top` (:math:`+ \mu + b 1^\top + 1 c^\top`).

        Returns
        -------
        ndarray of shape (n_users, n_items)
            Dense: mind the memory, ``8 * n_users * n_items`` bytes (48 MB for MovieLens
            ``ml-latest-small``).
        """
        check_is_fitted(self, "user_factors_")
        full = self.user_factors_ @ self.item_factors_.T
        if self._has_biases():
            full += self.global_mean_ + self.user_bias_[:, None] + self.item_bias_[None, :]
        return full

    def recommend(self, user, n=10, exclude_seen=True):
        """The ``n`` items with the highest predicted rating for one user, best first.

        Parameters
        ----------
        user : int
            Row index in ``[0, n_users)``.
        n : int, default 10
            Number of items to return (fewer if fewer candidates remain).
        exclude_seen : bool, default True
            Leave out the items this user rated in the training matrix.

        Returns
        -------
        ndarray of int, shape (n_returned,)
            Item (column) indices, by decreasing predicted rating (ties by increasing index);
            :meth:`predict` gives the predicted ratings.
        """
        check_is_fitted(self, "user_factors_")
        if isinstance(user, (bool, np.bool_)) or not isinstance(user, numbers.Integral):
            raise ValueError(f"user must be an integer index; got {user!r}")
        if not 0 <= user < self.n_users_:
            raise ValueError(f"user={user} is out of range [0, {self.n_users_}) for the "
                             f"{self.n_users_} users of the fitted model")
        n = check_int(n, "n", 1)
        user = int(user)
        scores = self.item_factors_ @ self.user_factors_[user]
        if self._has_biases():
            scores = scores + self.item_bias_  # mu + b_user do not change the ranking
        candidates = np.arange(self.n_items_)
        if exclude_seen:
            keep = np.ones(self.n_items_, dtype=bool)
            keep[self._seen_indices[self._seen_indptr[user]:self._seen_indptr[user + 1]]] = False
            candidates = candidates[keep]
        s = scores[candidates]
        top = np.argpartition(-s, n - 1)[:n] if n < s.size else np.arange(s.size)
        top = top[np.lexsort((candidates[top], -s[top]))]
        return candidates[top]

    def score(self, ratings) -> float:
        """Root mean squared error of the predictions on the stored entries of ``ratings``.

        Unlike scikit-learn's ``score``, lower is better: this is the held-out RMSE of the book.

        Parameters
        ----------
        ratings : scipy.sparse matrix of shape (n_users, n_items)
            Held-out ratings (e.g. the ``test`` of :func:`train_test_split_ratings`), with the
            shape of the training matrix.

        Returns
        -------
        float
        """
        check_is_fitted(self, "user_factors_")
        R = _check_ratings(ratings, shape=(self.n_users_, self.n_items_))
        return rmse(R.data, self.predict(_rows_of(R), R.indices))
