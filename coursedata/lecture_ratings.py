"""The lecture's toy rating matrix: six users, nine movies, eleven observed ratings.

Chapter 2 of the course book and problem set 2 both read it from here, so that there is one
definition. The lecture first lists the ratings as (user, movie, stars) triples, as
:data:`RATINGS` does, and then shows them as a 6 x 9 matrix in which every other entry is
unobserved (20 % of the 54 entries are observed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LectureRatings", "load_lecture_ratings", "RATINGS"]

USERS = ("Ninja", "Cat", "Angel", "Nursey", "Tongey", "Neutral")
MOVIES = ("Chained", "Frozen", "Bambi", "Titanic", "Goodfellas", "Dumbo", "Twilight", "Thor",
          "Tangled")
#: The observed ratings as the lecture lists them: (user, movie, stars).
RATINGS = (
    ("Ninja", "Chained", 2), ("Ninja", "Frozen", 3), ("Ninja", "Thor", 1),
    ("Cat", "Chained", 4), ("Cat", "Bambi", 5),
    ("Angel", "Titanic", 3), ("Angel", "Goodfellas", 5), ("Angel", "Dumbo", 5),
    ("Nursey", "Twilight", 2),
    ("Tongey", "Frozen", 5),
    ("Neutral", "Tangled", 1),
)


@dataclass(frozen=True)
class LectureRatings:
    """The lecture's rating matrix, users in rows and movies in columns.

    Attributes
    ----------
    users : tuple of str, length n_users (6)
        Row names: Ninja, Cat, Angel, Nursey, Tongey, Neutral.
    movies : tuple of str, length n_movies (9)
        Column names: Chained, Frozen, Bambi, Titanic, Goodfellas, Dumbo, Twilight, Thor, Tangled.
    ratings : ndarray of float, shape (n_users, n_movies)
        Stars (1 to 5) where a rating was observed and ``nan`` everywhere else. Read-only.
    """

    users: tuple[str, ...]
    movies: tuple[str, ...]
    ratings: np.ndarray

    @property
    def mask(self) -> np.ndarray:
        """Boolean array of shape (n_users, n_movies), True where a rating was observed."""
        return ~np.isnan(self.ratings)

    def to_sparse(self):
        """The observed ratings as a CSR matrix of shape (n_users, n_movies).

        Exactly the observed entries are stored; an entry that is not stored is missing, not a
        rating of zero.
        """
        rows, cols = np.nonzero(self.mask)
        import scipy.sparse as sp  # only here: a kernel whose problem set forbids SciPy loads the kit

        return sp.csr_matrix((self.ratings[rows, cols], (rows, cols)), shape=self.ratings.shape)

    def table(self) -> str:
        """The matrix as a text table, ``?`` marking an unobserved entry (as in the lecture)."""
        name_width = max(map(len, self.users))
        lines = [" " * name_width + "".join(f"  {m}" for m in self.movies)]
        for user, row in zip(self.users, self.ratings):
            cells = ("?" if np.isnan(v) else f"{v:.0f}" for v in row)
            lines.append(f"{user:<{name_width}}"
                         + "".join(f"  {c:^{len(m)}}" for c, m in zip(cells, self.movies)).rstrip())
        return "\n".join(lines)


def load_lecture_ratings() -> LectureRatings:
    """Load the lecture's toy example: 6 users x 9 movies with 11 observed ratings.

    Returns
    -------
    LectureRatings
        A fresh copy each call: ``ratings`` of shape (6, 9), ``nan`` where unobserved.

    Examples
    --------
    >>> toy = load_lecture_ratings()
    >>> toy.ratings.shape, int(toy.mask.sum())
    ((6, 9), 11)
    >>> toy.ratings[toy.users.index("Ninja"), toy.movies.index("Thor")]
    np.float64(1.0)
    """
    ratings = np.full((len(USERS), len(MOVIES)), np.nan)
    for user, movie, stars in RATINGS:
        ratings[USERS.index(user), MOVIES.index(movie)] = stars
    ratings.setflags(write=False)
    return LectureRatings(USERS, MOVIES, ratings)
