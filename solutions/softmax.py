r"""The softmax and its logarithm, computed stably in log space.

Derived in ``chapters/07_generative_discriminative.md``: every classifier of the course turns its
per-class scores (logits, or joint log-likelihoods) into probabilities with

.. math::

    \operatorname{softmax}_c(\mathbf z) = \frac{e^{z_c}}{\sum_{c'} e^{z_{c'}}},
    \qquad
    \log \operatorname{softmax}_c(\mathbf z) = z_c - \log \sum_{c'} e^{z_{c'}} ,

with the log-sum-exp taken after shifting by the maximum, so no exponential overflows.
Re-exported by :mod:`solutions.linear_classifiers`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = ["log_softmax", "softmax"]


def _check_logits(Z, axis: int) -> np.ndarray:
    Z = np.asarray(Z, dtype=float)
    if Z.ndim == 0:
        raise ValueError("Z must have at least one dimension; got a scalar")
    if np.isnan(Z).any() or np.isposinf(Z).any():
        raise ValueError("Z contains NaN or +inf; the softmax is undefined there")
    if Z.shape[axis] == 0:
        raise ValueError(f"Z is empty along axis {axis}")
    if np.isneginf(Z).all(axis=axis).any():
        raise ValueError(
            f"Z has a slice along axis {axis} whose entries are all -inf: its softmax is 0/0"
        )
    return Z


def log_softmax(Z, axis: int = -1) -> np.ndarray:
    r"""Numerically stable log-softmax :math:`z_c - \log\sum_{c'} e^{z_{c'}}`.

    The logits are shifted by their maximum and normalised with :func:`scipy.special.logsumexp`, so
    ``log_softmax([1000, -1000])`` is ``[0, -2000]`` with no overflow. Entries equal to
    ``-inf`` (log of probability 0) are allowed and stay ``-inf``.

    Parameters
    ----------
    Z : array_like
        Logits (e.g. of shape ``(n_samples, n_classes)``).
    axis : int, default -1
        Axis along which to normalise.

    Returns
    -------
    ndarray of the shape of ``Z``

    Raises
    ------
    ValueError
        If ``Z`` contains NaN or ``+inf``, or a slice along ``axis`` is all ``-inf`` (0/0).

    Examples
    --------
    >>> log_softmax([1000.0, -1000.0])
    array([    0., -2000.])
    """
    Z = _check_logits(Z, axis)
    # shift by the maximum first, so that the dominant entry is 0 - log(1 + small) to full precision
    T = Z - np.max(Z, axis=axis, keepdims=True)
    T -= logsumexp(T, axis=axis, keepdims=True)
    return T


def softmax(Z, axis: int = -1) -> np.ndarray:
    r"""Numerically stable softmax :math:`e^{z_c} / \sum_{c'} e^{z_{c'}}`.

    Computed as ``exp(log_softmax(Z))``: invariant to adding a constant along ``axis``, and
    free of overflow for large logits.

    Parameters
    ----------
    Z : array_like
        Logits.
    axis : int, default -1
        Axis along which the result sums to one.

    Returns
    -------
    ndarray of the shape of ``Z``

    Raises
    ------
    ValueError
        As :func:`log_softmax`.

    Examples
    --------
    >>> softmax([[1000.0, 1000.0], [0.0, -np.inf]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    return np.exp(log_softmax(Z, axis=axis))
