"""Input checks shared by every module of the reference package.

Each check raises :class:`ValueError` with a message that names the argument and says what was
wrong, so that a student calling the reference (or a chapter using it) sees the cause at once.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ConvergenceWarning",
    "as_float_array",
    "as_1d_float",
    "as_2d_float",
    "check_consistent_length",
    "check_int",
    "check_positive",
    "check_option",
    "check_is_fitted",
]


class ConvergenceWarning(UserWarning):
    """An iterative estimator stopped (``max_iter`` reached, or its line search failed) before
    meeting its tolerance. Re-exported by the modules whose estimators issue it."""


def as_float_array(x, name: str = "x", *, allow_empty: bool = False) -> np.ndarray:
    """Return ``x`` as a float ndarray, refusing NaN, infinity and (by default) empty input.

    Parameters
    ----------
    x : array_like
        Input data.
    name : str
        Name used in error messages.
    allow_empty : bool, default False
        Whether a zero-size array is acceptable.

    Returns
    -------
    ndarray of dtype float64
    """
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; could not convert it to floats ({exc})") from None
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty; at least one value is needed")
    if not np.all(np.isfinite(arr)):
        n_bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {n_bad} NaN or infinite value(s); clean or impute them first")
    return arr


def as_1d_float(x, name: str = "x", *, allow_empty: bool = False) -> np.ndarray:
    """Return ``x`` as a finite 1-D float array of shape ``(n,)``.

    A column vector of shape ``(n, 1)`` is accepted and flattened; any other 2-D shape is an error.
    """
    arr = as_float_array(x, name, allow_empty=allow_empty)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n,); got shape {arr.shape}")
    return arr


def as_2d_float(X, name: str = "X", *, allow_sparse: bool = False):
    """Return ``X`` as a finite 2-D float array of shape ``(n_samples, n_features)``.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix
        Input data. A sparse matrix is accepted only when ``allow_sparse`` is true; it is returned
        in CSR format with float64 data.
    name : str
        Name used in error messages.
    allow_sparse : bool, default False
        Whether a scipy.sparse matrix may be passed.
    """
    if sp.issparse(X):
        if not allow_sparse:
            raise ValueError(f"{name} must be a dense array; got a scipy.sparse {X.format} matrix")
        X = sp.csr_matrix(X, dtype=float)
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"{name} is empty; got shape {X.shape}")
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or infinite values")
        return X
    arr = as_float_array(X, name, allow_empty=True)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_samples, n_features); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty; got shape {arr.shape}")
    return arr


def check_consistent_length(**arrays) -> int:
    """Check that every keyword argument has the same number of rows; return that number.

    Examples
    --------
    >>> check_consistent_length(X=np.zeros((3, 2)), y=np.zeros(3))
    3
    """
    lengths = {name: a.shape[0] for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"mismatched lengths: {detail} rows")
    return next(iter(lengths.values()))


def check_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer (not a bool) ``>= minimum``.

    Examples
    --------
    >>> check_int(np.int64(3), "n_iters")
    3
    """
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    if not is_int or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_positive(value, name: str, *, strict: bool = True) -> float:
    """Return ``value`` as a float after checking that it is finite and positive (or non-negative)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number; got {value!r}") from None
    ok = v > 0 if strict else v >= 0
    if not np.isfinite(v) or not ok:
        bound = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}; got {value!r}")
    return v


def check_option(value, name: str, options) -> str:
    """Check that ``value`` is one of ``options``; the message lists the valid choices."""
    if value not in options:
        choices = ", ".join(repr(o) for o in options)
        raise ValueError(f"unknown {name} {value!r}; choose one of {choices}")
    return value


def check_is_fitted(estimator, attribute: str) -> None:
    """Raise ``ValueError`` if ``estimator`` has no fitted attribute ``attribute``."""
    if not hasattr(estimator, attribute):
        raise ValueError(
            f"this {type(estimator).__name__} is not fitted yet; call fit(...) before using it"
        )


def as_fitted_input(estimator, X, *, fitted: str, n_columns: str, name: str = "X",
                    allow_sparse: bool = False):
    """Validate the input of a fitted estimator's method: fitted, finite 2-D, right width.

    Parameters
    ----------
    estimator : object
    X : array_like or scipy.sparse matrix
    fitted : str
        The attribute whose presence marks ``estimator`` as fitted (see :func:`check_is_fitted`).
    n_columns : str
        The attribute holding the number of columns ``X`` must have, e.g. ``"n_features_in_"``.
    name : str, default "X"
        Name used in error messages.
    allow_sparse : bool, default False
        As in :func:`as_2d_float`.

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix of shape (n_samples, getattr(estimator, n_columns))
    """
    check_is_fitted(estimator, fitted)
    X = as_2d_float(X, name, allow_sparse=allow_sparse)
    expected = getattr(estimator, n_columns)
    if X.shape[1] != expected:
        raise ValueError(
            f"{name} has {X.shape[1]} columns, but this {type(estimator).__name__} has "
            f"{n_columns}={expected}"
        )
    return X
