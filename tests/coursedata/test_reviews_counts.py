"""coursedata.load_reviews(binary=False): word counts for the multinomial event model (chapter 6).

Oracle: scikit-learn's CountVectorizer, run on the raw review text with the same token pattern and
vocabulary.
"""

from __future__ import annotations

import numpy as np

import coursedata


def test_reviews_word_counts_match_an_independent_tokeniser():
    """binary=False counts every occurrence; scikit-learn's CountVectorizer with the same token
    pattern and vocabulary, run on the raw text, is the oracle."""
    from sklearn.feature_extraction.text import CountVectorizer

    from coursedata.loaders import _TOKEN, _rdata

    counts = coursedata.load_reviews(binary=False)
    binary = coursedata.load_reviews()
    assert counts.feature_names == binary.feature_names
    np.testing.assert_array_equal(counts.y, binary.y)
    np.testing.assert_array_equal((counts.X > 0).toarray(), binary.X.toarray() > 0)
    text = _rdata("modeldata", "training_data")["review"].astype(str)
    oracle = CountVectorizer(token_pattern=_TOKEN.pattern, lowercase=True,
                             vocabulary=counts.feature_names).transform(text)
    assert (counts.X != oracle).nnz == 0
    assert counts.X.max() > 1
