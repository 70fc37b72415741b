r"""Naive Bayes classifiers: Bernoulli, multinomial, categorical, Gaussian and kernel-density variants.

Derived in ``chapters/06_naive_bayes.md``; the Gaussian variant with a shared variance and its
link to logistic regression are in ``chapters/07_generative_discriminative.md`` (see
:mod:`solutions.linear_classifiers`).

A generative classifier models the joint distribution :math:`p(\mathbf x, y)` and classifies with
Bayes' rule,

.. math::

    p(y=c \mid \mathbf x) = \frac{p(\mathbf x \mid y=c)\, p(y=c)}
                                 {\sum_{c'} p(\mathbf x \mid y=c')\, p(y=c')} .

*Naive* Bayes assumes the features are conditionally independent given the class,

.. math::

    p(\mathbf x \mid y=c) = \prod_{d=1}^{D} p(x_d \mid y=c),

so that with binary features and two classes the model needs :math:`2D+1` parameters (one prior
and :math:`D` Bernoulli parameters per class) instead of the :math:`2^{D+1}-1` of a full table
over :math:`(\mathbf x, y) \in \{0,1\}^D \times \{0,1\}`. The maximum-likelihood estimates are
counts: :math:`\hat\pi_c = N_c / N` and, for binary features,
:math:`\hat\theta_{jc} = N_{jc} / N_c` with :math:`N_{jc}` the number of class-:math:`c`
examples with :math:`x_j = 1` (binary features are indexed by :math:`j`, continuous ones by
:math:`d`, as in the book's notation).

Implementation (after scikit-learn's ``sklearn/naive_bayes.py``): one abstract base class,
:class:`BaseNaiveBayes`, holds label encoding, class counts and log priors, validation and
blocked evaluation of an abstract ``_joint_log_likelihood(X)`` that returns
:math:`\log p(\mathbf x, y=c)` with shape ``(n_samples, n_classes)`` and that each variant fills
in; ``predict``, ``predict_proba`` and ``predict_log_proba`` come from the base that logistic
regression shares (``solutions/_classifier.py``). Everything stays in log space: probabilities
are normalised with :func:`scipy.special.logsumexp` (through :func:`solutions.softmax.log_softmax`),
never by multiplying probabilities, and prediction runs over blocks of rows so that memory stays
bounded for large inputs.

**Impossible rows.** Without smoothing (``alpha=0``) or with a compact kernel, a row can have
:math:`\log p(\mathbf x, y=c) = -\infty` for *every* class: the evidence :math:`p(\mathbf x)` is
0 and the posterior is the undefined ratio :math:`0/0`. The classifiers here then return the
class prior :math:`\hat\pi_c` for that row (``predict`` gives the most frequent class), never NaN;
``predict_joint_log_proba`` still reports the :math:`-\infty` values so such rows can be found.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np
import scipy.sparse as sp

from solutions._classifier import ProbabilisticClassifier
from solutions._validation import as_2d_float, check_consistent_length, check_positive

__all__ = [
    "BaseNaiveBayes",
    "BernoulliNB",
    "CategoricalNB",
    "GaussianNB",
    "KDENaiveBayes",
    "MultinomialNB",
]


def _class_indicator(y_idx: np.ndarray, n_classes: int) -> sp.csr_matrix:
    """Sparse class-indicator matrix ``Y`` of shape ``(n_classes, n_samples)``, ``Y[c, n] = [y_n = c]``.

    ``Y @ X`` sums the rows of ``X`` class by class (dense or sparse ``X``) in one pass without a
    Python loop and without densifying.
    """
    n = y_idx.shape[0]
    return sp.csr_matrix((np.ones(n), (y_idx, np.arange(n))), shape=(n_classes, n))


def _fmt(value) -> str:
    """``repr`` of a label or value without numpy's scalar wrapper (``0``, not ``np.int64(0)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _to_dense(A) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def _validate_Xy(X, y, *, accept_sparse: bool = False):
    """Validate training data ``(X, y)`` and encode the labels.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Finite float data.
    y_idx : ndarray of int of shape (n_samples,)
        Index of each label in ``classes``.
    classes : ndarray of shape (n_classes,)
        ``np.unique(y)``: sorted labels of any sortable type; at least two.
    counts : ndarray of float of shape (n_classes,)
        :math:`N_c`, the number of examples per class.
    """
    X = as_2d_float(X, "X", allow_sparse=accept_sparse)
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D of shape (n_samples,); got shape {y.shape}")
    check_consistent_length(X=X, y=y)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite labels")
    try:
        classes, y_idx, counts = np.unique(y, return_inverse=True, return_counts=True)
    except TypeError as exc:
        raise ValueError(f"y labels could not be sorted; use labels of one type ({exc})") from None
    if classes.shape[0] < 2:
        raise ValueError(
            f"y has a single class ({_fmt(classes[0])}); a classifier needs at least two classes"
        )
    return X, y_idx.ravel(), classes, counts.astype(float)


def _gaussian_jll(X, theta, inv_std, const) -> np.ndarray:
    r"""Return :math:`\mathrm{const}_c - \frac12 \sum_d (x_{nd}-\mu_{cd})^2 / \sigma^2_{cd}`.

    ``theta`` and ``inv_std`` have shape ``(n_classes, n_features)``, ``const`` ``(n_classes,)``;
    the loop runs over classes only, with one ``(n_rows, n_features)`` temporary.
    """
    jll = np.empty((X.shape[0], theta.shape[0]))
    Z = np.empty_like(X)
    for c in range(theta.shape[0]):
        np.subtract(X, theta[c], out=Z)
        Z *= inv_std[c]
        jll[:, c] = np.einsum("ij,ij->i", Z, Z)
    jll *= -0.5
    jll += const
    return jll


class BaseNaiveBayes(ProbabilisticClassifier):
    r"""Abstract base of the naive Bayes classifiers.

    Subclasses implement ``fit`` (calling :meth:`_validate_training_data` first and
    :meth:`_set_class_statistics` last) and ``_joint_log_likelihood``; this class supplies the
    class priors :math:`\log \hat\pi_c = \log(N_c / N)` and blocked evaluation, and
    :class:`~solutions._classifier.ProbabilisticClassifier` the posterior

    .. math::

        \log p(y=c \mid \mathbf x) = \log p(\mathbf x, y=c)
            - \log \sum_{c'} \exp \log p(\mathbf x, y=c') ,

    ``predict``, ``predict_proba``, ``predict_log_proba`` and ``score``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels (``np.unique(y)``; any label type numpy can sort).
    class_count_ : ndarray of shape (n_classes,)
        Number of training examples :math:`N_c` per class.
    class_log_prior_ : ndarray of shape (n_classes,)
        :math:`\log(N_c / N)`.
    n_features_in_ : int
        Number of features seen in ``fit``.
    """

    #: rows per block in prediction; the per-block temporaries are O(block * n_features)
    _block_rows = 4096

    # ------------------------------------------------------------------ subclass interface
    @abstractmethod
    def _joint_log_likelihood(self, X) -> np.ndarray:
        r"""Return :math:`\log p(\mathbf x_n, y=c)` as an array of shape ``(n_rows, n_classes)``.

        ``X`` is a validated block of rows (checked by :meth:`_check_X`).
        """

    # ------------------------------------------------------------------ fitting helpers
    def _validate_training_data(self, X, y):
        """Validate ``(X, y)`` for ``fit`` and encode the labels (see :func:`_validate_Xy`)."""
        X, y_idx, classes, counts = _validate_Xy(X, y, accept_sparse=self._accept_sparse)
        self._check_feature_values(X)
        return X, y_idx, classes, counts

    def _set_class_statistics(self, classes, counts, n_features) -> None:
        """Store ``classes_``, ``class_count_``, ``class_log_prior_``, ``n_features_in_`` (last in fit)."""
        self.class_count_ = counts
        self.class_log_prior_ = np.log(counts) - np.log(counts.sum())
        self.n_features_in_ = int(n_features)
        self.classes_ = classes  # set last: its presence marks the estimator as fitted

    # ------------------------------------------------------------------ prediction
    def _blocked_jll(self, X) -> np.ndarray:
        """The joint log-likelihood of a validated ``X``, evaluated in blocks of rows."""
        n, step = X.shape[0], self._block_rows
        if n <= step:
            return self._joint_log_likelihood(X)
        return np.vstack([self._joint_log_likelihood(X[s:s + step]) for s in range(0, n, step)])

    def _class_scores(self, X) -> np.ndarray:
        """The joint log-likelihood, with the log prior for rows impossible under every class."""
        jll = self._blocked_jll(X)
        impossible = np.isneginf(jll).all(axis=1)
        if impossible.any():
            jll = jll.copy()
            jll[impossible] = self.class_log_prior_
        return jll

    def predict_joint_log_proba(self, X) -> np.ndarray:
        r"""Return the joint log-likelihood :math:`\log p(\mathbf x_n, y=c)`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; may contain ``-inf`` (probability 0).
        """
        return self._blocked_jll(self._check_X(X))


# ====================================================================== Bernoulli
class BernoulliNB(BaseNaiveBayes):
    r"""Naive Bayes for binary features with add-:math:`\alpha` smoothing.

    Model: :math:`p(\mathbf x \mid y=c) = \prod_j \theta_{jc}^{x_j} (1-\theta_{jc})^{1-x_j}`,
    estimated by

    .. math::

        \hat\theta_{jc} = \frac{N_{jc} + \alpha}{N_c + 2\alpha},

    the MAP estimate under a :math:`\mathrm{Beta}(\alpha+1, \alpha+1)` prior (``alpha=1``:
    add-one / Laplace smoothing; ``alpha=0``: the maximum-likelihood estimate
    :math:`N_{jc}/N_c`). The joint log-likelihood is linear in :math:`\mathbf x`,

    .. math::

        \log p(\mathbf x, y=c) = \sum_j x_j \log\frac{\theta_{jc}}{1-\theta_{jc}}
            + \sum_j \log(1-\theta_{jc}) + \log\pi_c ,

    computed as one product ``X @ W.T`` that works on a scipy.sparse ``X`` without densifying.

    With ``alpha=0`` the MLE suffers from the zero-count problem: a word never seen in class
    :math:`c` gives :math:`\hat\theta_{jc}=0`, and a document containing it gets log-probability
    :math:`-\infty` (posterior exactly 0, not NaN) under class :math:`c`. If that happens for every
    class the row falls back to the prior (see the module docstring).

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count :math:`\alpha \ge 0` added to every count.

    Attributes
    ----------
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`N_{jc}`, the number of class-:math:`c` examples with :math:`x_j = 1`.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log\hat\theta_{jc}` (``-inf`` where :math:`\hat\theta_{jc} = 0`).
    class_count_, class_log_prior_, classes_, n_features_in_
        See :class:`BaseNaiveBayes`.

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    >>> clf = BernoulliNB(alpha=1.0).fit(X, ["spam", "spam", "ham", "ham"])
    >>> np.exp(clf.feature_log_prob_)   # (N_jc + 1) / (N_c + 2)
    array([[0.25, 0.5 ],
           [0.75, 0.5 ]])
    >>> clf.predict([[1, 0]])
    array(['spam'], dtype='<U4')
    """

    _accept_sparse = True

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    def _check_feature_values(self, X) -> None:
        values = X.data if sp.issparse(X) else X
        bad = (values != 0) & (values != 1)
        if bad.any():
            example = values[bad].flat[0]
            raise ValueError(
                f"BernoulliNB expects binary features 0/1; X contains {_fmt(example)} "
                f"({int(np.count_nonzero(bad))} non-binary value(s)); binarise X first, e.g. X > 0"
            )

    def fit(self, X, y):
        """Estimate the class priors and the smoothed Bernoulli parameters.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Binary features (0/1).
        y : array_like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        alpha = check_positive(self.alpha, "alpha", strict=False)
        X, y_idx, classes, counts = self._validate_training_data(X, y)
        feature_count = _to_dense(_class_indicator(y_idx, classes.shape[0]) @ X)
        theta = (feature_count + alpha) / (counts[:, None] + 2.0 * alpha)
        with np.errstate(divide="ignore"):
            log_theta = np.log(theta)
            log_1m_theta = np.log1p(-theta)
        # theta in {0, 1} (only when alpha == 0) gives infinite logs; keep finite parts for the
        # product X @ W.T (0 * inf would be NaN) and mark the impossible rows separately.
        zero, one = theta == 0.0, theta == 1.0
        self._degenerate = bool(zero.any() or one.any())
        log_theta_f = np.where(zero, 0.0, log_theta)
        log_1m_theta_f = np.where(one, 0.0, log_1m_theta)
        self._weights_T = np.ascontiguousarray((log_theta_f - log_1m_theta_f).T)  # (D, C)
        self._offset_no_prior = log_1m_theta_f.sum(axis=1)  # (C,)
        if self._degenerate:
            self._zero_mask_T = np.ascontiguousarray(zero.T, dtype=float)
            self._one_mask_T = np.ascontiguousarray(one.T, dtype=float)
            self._one_count = one.sum(axis=1)
        self.feature_count_ = feature_count
        self.feature_log_prob_ = log_theta
        self._set_class_statistics(classes, counts, X.shape[1])
        self._offset = self._offset_no_prior + self.class_log_prior_
        return self

    def _joint_log_likelihood(self, X) -> np.ndarray:
        jll = np.asarray(X @ self._weights_T)
        jll += self._offset
        if self._degenerate:
            # x_j = 1 where theta_jc = 0, or x_j = 0 where theta_jc = 1: probability 0
            impossible = np.asarray(X @ self._zero_mask_T) > 0
            impossible |= (self._one_count - np.asarray(X @ self._one_mask_T)) > 0
            jll[impossible] = -np.inf
        return jll


# ====================================================================== Multinomial
class MultinomialNB(BaseNaiveBayes):
    r"""Naive Bayes for word counts: the multinomial event model, with add-:math:`\alpha` smoothing.

    A document of class :math:`c` is a sequence of :math:`L` words drawn independently from one
    categorical distribution :math:`\boldsymbol\theta_c` over the vocabulary, so its count vector
    :math:`\mathbf x` (:math:`x_j` = occurrences of word :math:`j`) has

    .. math::

        p(\mathbf x \mid y=c) = \frac{L!}{\prod_j x_j!}\prod_j \theta_{jc}^{x_j}, \qquad
        \hat\theta_{jc} = \frac{T_{jc} + \alpha}{\sum_{j'} T_{j'c} + D\alpha},

    where :math:`T_{jc}` is the total count of word :math:`j` in the class-:math:`c` training
    documents: the MAP estimate under a symmetric :math:`\mathrm{Dirichlet}(\alpha + 1)` prior
    (McCallum and Nigam, 1998). The multinomial coefficient (and the length distribution
    :math:`p(L)`) do not depend on the class, so, like scikit-learn, the joint log-likelihood
    returned here leaves them out,

    .. math::

        \log p(\mathbf x, y=c) \doteq \log\pi_c + \sum_j x_j\log\hat\theta_{jc},

    which changes no posterior. It is one sparse product ``X @ log_theta.T``.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count :math:`\alpha > 0` added to every word count.

    Attributes
    ----------
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`T_{jc}`.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log\hat\theta_{jc}`; each row's exponentials sum to one.
    class_count_, class_log_prior_, classes_, n_features_in_
        See :class:`BaseNaiveBayes`.

    Examples
    --------
    >>> X = np.array([[3, 0], [2, 1], [0, 2], [1, 3]])
    >>> clf = MultinomialNB(alpha=1.0).fit(X, ["spam", "spam", "ham", "ham"])
    >>> np.exp(clf.feature_log_prob_)   # rows ham, spam: (T_jc + 1) / (T_c + 2)
    array([[0.25, 0.75],
           [0.75, 0.25]])
    >>> clf.predict([[4, 1]])
    array(['spam'], dtype='<U4')
    """

    _accept_sparse = True

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    def _check_feature_values(self, X) -> None:
        values = X.data if sp.issparse(X) else X
        if (values < 0).any():
            raise ValueError(
                f"MultinomialNB expects non-negative counts; X contains {_fmt(values[values < 0].flat[0])}"
            )

    def fit(self, X, y):
        """Estimate the class priors and the smoothed word distributions of each class.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Non-negative word counts.
        y : array_like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        alpha = check_positive(self.alpha, "alpha")
        X, y_idx, classes, counts = self._validate_training_data(X, y)
        feature_count = _to_dense(_class_indicator(y_idx, classes.shape[0]) @ X)
        smoothed = feature_count + alpha
        self.feature_count_ = feature_count
        self.feature_log_prob_ = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))
        self._weights_T = np.ascontiguousarray(self.feature_log_prob_.T)             # (D, C)
        self._set_class_statistics(classes, counts, X.shape[1])
        return self

    def _joint_log_likelihood(self, X) -> np.ndarray:
        return np.asarray(X @ self._weights_T) + self.class_log_prior_


# ====================================================================== Categorical
class CategoricalNB(BaseNaiveBayes):
    r"""Naive Bayes for categorical features coded as integers :math:`0, \dots, K_d - 1`.

    Model: :math:`p(x_d = k \mid y=c) = \theta_{dkc}`, estimated with add-:math:`\alpha`
    smoothing (the MAP under a symmetric :math:`\mathrm{Dirichlet}(\alpha+1)` prior),

    .. math::

        \hat\theta_{dkc} = \frac{N_{dkc} + \alpha}{N_c + \alpha K_d},

    where :math:`N_{dkc}` counts the class-:math:`c` examples with :math:`x_d = k` and each
    feature has its own number of categories :math:`K_d`. The joint log-likelihood is
    :math:`\log\pi_c + \sum_d \log\theta_{d, x_d, c}`, computed as a sparse one-hot encoding of
    ``X`` times the stacked table of :math:`\log\theta`.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count :math:`\alpha \ge 0`.
    n_categories : None, int or array_like of shape (n_features,), default None
        :math:`K_d`. ``None`` infers :math:`K_d = \max_n x_{nd} + 1` from the training data;
        give it when a category may be absent from the training set (it then gets probability
        :math:`\alpha / (N_c + \alpha K_d)`).

    Attributes
    ----------
    n_categories_ : ndarray of int of shape (n_features,)
        :math:`K_d`.
    category_count_ : list of n_features ndarrays of shape (n_classes, K_d)
        :math:`N_{dkc}` (row ``c``, column ``k``).
    feature_log_prob_ : list of n_features ndarrays of shape (n_classes, K_d)
        :math:`\log\hat\theta_{dkc}`.
    class_count_, class_log_prior_, classes_, n_features_in_
        See :class:`BaseNaiveBayes`.

    Notes
    -----
    A category :math:`\ge K_d` at predict time was never seen (nor declared through
    ``n_categories``) and raises ``ValueError``; scikit-learn raises ``IndexError`` there.

    Examples
    --------
    >>> X = np.array([[0, 2], [1, 2], [1, 0], [0, 1]])
    >>> clf = CategoricalNB(alpha=1.0).fit(X, [0, 0, 1, 1])
    >>> clf.n_categories_
    array([2, 3])
    >>> np.exp(clf.feature_log_prob_[1])   # (N_dkc + 1) / (N_c + 3)
    array([[0.2, 0.2, 0.6],
           [0.4, 0.4, 0.2]])
    """

    def __init__(self, alpha: float = 1.0, n_categories=None):
        self.alpha = alpha
        self.n_categories = n_categories

    def _check_feature_values(self, X) -> None:
        if np.any(X < 0) or np.any(X != np.floor(X)):
            bad = X[(X < 0) | (X != np.floor(X))].flat[0]
            raise ValueError(
                f"CategoricalNB expects integer categories 0, 1, 2, ...; X contains {_fmt(bad)}; "
                "encode categories as non-negative integers first"
            )

    def _resolve_n_categories(self, X_int: np.ndarray) -> np.ndarray:
        observed = X_int.max(axis=0) + 1
        if self.n_categories is None:
            return observed
        k = np.asarray(self.n_categories)
        if k.ndim == 0:
            k = np.full(X_int.shape[1], k)
        if k.shape != (X_int.shape[1],):
            raise ValueError(
                f"n_categories must be an int or have one entry per feature ({X_int.shape[1]}); "
                f"got shape {k.shape}"
            )
        if k.dtype.kind not in "iu" and not (k.dtype.kind == "f" and np.all(k == np.floor(k))):
            raise ValueError(f"n_categories must be integers; got {self.n_categories!r}")
        k = k.astype(np.intp)
        short = np.flatnonzero(k < observed)
        if short.size:
            d = int(short[0])
            raise ValueError(
                f"n_categories[{d}] = {int(k[d])} but X[:, {d}] contains category "
                f"{int(observed[d]) - 1}; n_categories must exceed every category in X"
            )
        return k

    def _one_hot(self, X_int: np.ndarray) -> sp.csr_matrix:
        """Sparse one-hot encoding of shape ``(n_samples, sum_d K_d)``."""
        n, D = X_int.shape
        indices = (X_int + self._offsets[:-1]).ravel()
        indptr = np.arange(0, n * D + 1, D)
        return sp.csr_matrix((np.ones(n * D), indices, indptr), shape=(n, int(self._offsets[-1])))

    def fit(self, X, y):
        """Count categories per class and feature and smooth them.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Non-negative integer category codes.
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        alpha = check_positive(self.alpha, "alpha", strict=False)
        X, y_idx, classes, counts = self._validate_training_data(X, y)
        X_int = X.astype(np.intp)
        n_cat = self._resolve_n_categories(X_int)
        self._offsets = np.concatenate([[0], np.cumsum(n_cat)])
        counts_flat = _to_dense(_class_indicator(y_idx, classes.shape[0]) @ self._one_hot(X_int))
        denom = counts[:, None] + alpha * np.repeat(n_cat, n_cat)[None, :]
        with np.errstate(divide="ignore"):  # alpha = 0 and an unseen category: log 0 = -inf
            log_prob_flat = np.log(counts_flat + alpha) - np.log(denom)
        split = self._offsets[1:-1]
        self.n_categories_ = n_cat
        self.category_count_ = np.split(counts_flat, split, axis=1)
        self.feature_log_prob_ = np.split(log_prob_flat, split, axis=1)
        self._log_prob_flat_T = np.ascontiguousarray(log_prob_flat.T)  # (sum K_d, C)
        self._set_class_statistics(classes, counts, X.shape[1])
        return self

    def _check_X(self, X):
        X = super()._check_X(X)
        unseen = X >= self.n_categories_
        if unseen.any():
            row, d = np.argwhere(unseen)[0]
            raise ValueError(
                f"X[:, {d}] contains category {int(X[row, d])}, unseen in training: feature {d} "
                f"has {int(self.n_categories_[d])} categories 0..{int(self.n_categories_[d]) - 1} "
                "(declare more with n_categories)"
            )
        return X

    def _joint_log_likelihood(self, X) -> np.ndarray:
        # sparse @ dense touches only the stored ones: a -inf entry adds -inf, never 0 * inf
        jll = np.asarray(self._one_hot(X.astype(np.intp)) @ self._log_prob_flat_T)
        jll += self.class_log_prior_
        return jll


# ====================================================================== Gaussian
class GaussianNB(BaseNaiveBayes):
    r"""Naive Bayes with one Gaussian per class and feature.

    Model: :math:`p(x_d \mid y=c) = \mathcal N(x_d; \mu_{cd}, \sigma^2_{cd})` with the
    maximum-likelihood estimates

    .. math::

        \hat\mu_{cd} = \frac{1}{N_c}\sum_{n: y_n=c} x_{nd}, \qquad
        \hat\sigma^2_{cd} = \frac{1}{N_c}\sum_{n: y_n=c} (x_{nd}-\hat\mu_{cd})^2 + \varepsilon,

    where, exactly as scikit-learn, :math:`\varepsilon = \text{var\_smoothing} \cdot
    \max_d \operatorname{Var}(x_d)` (variance over all training rows) keeps the variances away
    from zero. The decision rule is quadratic in :math:`\mathbf x`:

    .. math::

        \log p(\mathbf x, y=c) = \log\pi_c - \frac12\sum_d \log(2\pi\sigma^2_{cd})
            - \sum_d \frac{(x_d-\mu_{cd})^2}{2\sigma^2_{cd}} .

    Parameters
    ----------
    var_smoothing : float, default 1e-9
        Fraction :math:`\ge 0` of the largest feature variance added to every variance.

    Attributes
    ----------
    theta_ : ndarray of shape (n_classes, n_features)
        Class means :math:`\hat\mu_{cd}`.
    var_ : ndarray of shape (n_classes, n_features)
        Smoothed class variances :math:`\hat\sigma^2_{cd}`.
    epsilon_ : float
        :math:`\varepsilon` added to the variances.
    class_count_, class_log_prior_, classes_, n_features_in_
        See :class:`BaseNaiveBayes`.

    Examples
    --------
    >>> X = np.array([[0.0], [2.0], [10.0], [14.0]])
    >>> clf = GaussianNB().fit(X, [0, 0, 1, 1])
    >>> clf.theta_.ravel(), clf.var_.ravel().round(6)
    (array([ 1., 12.]), array([1., 4.]))
    >>> clf.predict([[3.0], [9.0]])
    array([0, 1])
    """

    def __init__(self, var_smoothing: float = 1e-9):
        self.var_smoothing = var_smoothing

    def fit(self, X, y):
        """Estimate class priors, means and (smoothed) variances.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        var_smoothing = check_positive(self.var_smoothing, "var_smoothing", strict=False)
        X, y_idx, classes, counts = self._validate_training_data(X, y)
        indicator = _class_indicator(y_idx, classes.shape[0])
        theta = (indicator @ X) / counts[:, None]
        resid = X - theta[y_idx]  # two-pass variance: no cancellation
        resid *= resid
        var = (indicator @ resid) / counts[:, None]
        epsilon = var_smoothing * float(np.var(X, axis=0).max())
        var += epsilon
        if not np.all(var > 0):
            c, d = np.argwhere(~(var > 0))[0]
            raise ValueError(
                f"the variance of feature {d} in class {_fmt(classes[c])} is 0 (the feature is constant "
                "there) and var_smoothing adds nothing; use var_smoothing > 0 with a non-constant X"
            )
        self.theta_ = theta
        self.var_ = var
        self.epsilon_ = epsilon
        self._inv_std = 1.0 / np.sqrt(var)
        self._set_class_statistics(classes, counts, X.shape[1])
        self._const = self.class_log_prior_ - 0.5 * np.log(2.0 * np.pi * var).sum(axis=1)
        return self

    def _joint_log_likelihood(self, X) -> np.ndarray:
        return _gaussian_jll(X, self.theta_, self._inv_std, self._const)


# ====================================================================== KDE
class KDENaiveBayes(BaseNaiveBayes):
    r"""Naive Bayes with a one-dimensional kernel density estimate per class and feature.

    Model: :math:`p(x_d \mid y=c) = \hat f_{cd}(x_d)`, the kernel density estimate

    .. math::

        \hat f_{cd}(x) = \frac{1}{N_c h_{cd}} \sum_{n: y_n=c} K\!\left(\frac{x - x_{nd}}{h_{cd}}\right),

    fitted by :class:`solutions.kde.KernelDensity` on the class-:math:`c` values of feature
    :math:`d`, so that :math:`\log p(\mathbf x, y=c) = \log\pi_c + \sum_d \log\hat f_{cd}(x_d)`.

    A compact kernel (``"uniform"``, ``"epanechnikov"``) gives density 0 (log density
    :math:`-\infty`) outside the support; if that happens under every class for a row, the row
    falls back to the prior (see the module docstring).

    Parameters
    ----------
    kernel : {"gaussian", "uniform", "epanechnikov"}, default "gaussian"
    bandwidth : float or {"scott", "silverman"}, default "scott"
        Passed to :class:`solutions.kde.KernelDensity`; a rule is applied per class and feature.

    Attributes
    ----------
    estimators_ : list of n_classes lists of n_features KernelDensity
        ``estimators_[c][d]`` is the fitted density of feature ``d`` in class ``classes_[c]``.
    class_count_, class_log_prior_, classes_, n_features_in_
        See :class:`BaseNaiveBayes`.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> clf = KDENaiveBayes(bandwidth=1.0).fit(X, [0, 0, 0, 1, 1, 1])
    >>> clf.predict([[1.5], [9.0]])
    array([0, 1])
    """

    def __init__(self, kernel: str = "gaussian", bandwidth="scott"):
        self.kernel = kernel
        self.bandwidth = bandwidth

    def fit(self, X, y):
        """Fit one :class:`~solutions.kde.KernelDensity` per class and feature.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : array_like of shape (n_samples,)

        Returns
        -------
        self
        """
        from solutions.kde import KernelDensity

        X, y_idx, classes, counts = self._validate_training_data(X, y)
        estimators = []
        for c in range(classes.shape[0]):
            Xc = X[y_idx == c]
            row = []
            for d in range(X.shape[1]):
                try:
                    row.append(KernelDensity(kernel=self.kernel, bandwidth=self.bandwidth).fit(Xc[:, d]))
                except ValueError as exc:
                    raise ValueError(f"class {_fmt(classes[c])}, feature {d}: {exc}") from None
            estimators.append(row)
        self.estimators_ = estimators
        self._set_class_statistics(classes, counts, X.shape[1])
        return self

    def _joint_log_likelihood(self, X) -> np.ndarray:
        jll = np.empty((X.shape[0], len(self.estimators_)))
        for c, per_feature in enumerate(self.estimators_):
            total = np.full(X.shape[0], self.class_log_prior_[c])
            for d, kde in enumerate(per_feature):
                total += np.asarray(kde.score_samples(X[:, d]))
            jll[:, c] = total
        return jll
