"""Honest answers to ps4_map_naive_bayes: loops over classes, features and samples, and counts
with np.bincount / np.add.at, np.logaddexp.reduce and a split of the Bernoulli likelihood
(numpy only, as the rules say)."""

LOOPS = {
    "beta_map": '''\
def beta_map(n_ones, n_zeros, a, b):
    ones = np.array(n_ones, dtype=float)
    total = ones + np.array(n_zeros, dtype=float)
    alpha_post = ones + a
    beta_post = total - ones + b
    return (alpha_post - 1) / (alpha_post + beta_post - 2)
''',
    "fit_bernoulli_nb": '''\
def fit_bernoulli_nb(X, y, alpha):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n_classes = int(np.max(y)) + 1
    log_prior = np.zeros(n_classes)
    log_theta = np.zeros((n_classes, X.shape[1]))
    for c in range(n_classes):
        rows = X[y == c]
        log_prior[c] = np.log(len(rows) / len(X))
        log_theta[c] = np.log((rows.sum(axis=0) + alpha) / (len(rows) + 2 * alpha))
    return log_prior, log_theta
''',
    "bernoulli_joint_log_likelihood": '''\
def bernoulli_joint_log_likelihood(X, log_prior, log_theta):
    X = np.asarray(X, dtype=float)
    out = np.empty((X.shape[0], len(log_prior)))
    for c in range(len(log_prior)):
        log_off = np.log1p(-np.exp(log_theta[c]))
        out[:, c] = log_prior[c] + X @ log_theta[c] + (1 - X) @ log_off
    return out
''',
    "predict_log_proba": '''\
def predict_log_proba(joint):
    joint = np.asarray(joint, dtype=float)
    out = np.empty_like(joint)
    for i, row in enumerate(joint):
        top = max(row)
        total = 0.0
        for value in row:
            total += np.exp(value - top)
        out[i] = row - (top + np.log(total))
    return out
''',
    "one_hot": '''\
def one_hot(X, n_categories):
    X = np.asarray(X, dtype=int)
    sizes = [int(k) for k in np.ravel(n_categories)]
    out = np.zeros((X.shape[0], sum(sizes)))
    for i in range(X.shape[0]):
        start = 0
        for d, k in enumerate(sizes):
            out[i, start + X[i, d]] = 1.0
            start += k
    return out
''',
    "fit_categorical_nb": '''\
def fit_categorical_nb(X, y, n_categories, alpha):
    X = np.asarray(X, dtype=int)
    y = np.asarray(y)
    sizes = [int(k) for k in np.ravel(n_categories)]
    C = int(y.max()) + 1
    log_prior = np.empty(C)
    log_theta = np.empty((C, sum(sizes)))
    for c in range(C):
        Xc = X[y == c]
        log_prior[c] = np.log(Xc.shape[0] / X.shape[0])
        start = 0
        for d, k in enumerate(sizes):
            counts = np.bincount(Xc[:, d], minlength=k)
            log_theta[c, start:start + k] = np.log((counts + alpha) / (Xc.shape[0] + k * alpha))
            start += k
    return log_prior, log_theta
''',
    "categorical_joint_log_likelihood": '''\
def categorical_joint_log_likelihood(X, n_categories, log_prior, log_theta):
    X = np.asarray(X, dtype=int)
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(int)
    out = np.tile(np.asarray(log_prior, dtype=float), (X.shape[0], 1))
    for d in range(X.shape[1]):
        out += log_theta[:, offsets[d] + X[:, d]].T
    return out
''',
}

ROUTE = {
    "beta_map": '''\
def beta_map(n_ones, n_zeros, a, b):
    return np.divide(np.add(n_ones, a - 1.0), np.add(np.add(n_ones, n_zeros), a + b - 2.0))
''',
    "fit_bernoulli_nb": '''\
def fit_bernoulli_nb(X, y, alpha):
    X = np.asarray(X, dtype=float)
    labels = np.asarray(y).astype(int)
    n_c = np.bincount(labels).astype(float)
    ones = np.zeros((n_c.size, X.shape[1]))
    np.add.at(ones, labels, X)
    return np.log(n_c) - np.log(labels.size), np.log(ones + alpha) - np.log(n_c[:, None] + 2 * alpha)
''',
    "bernoulli_joint_log_likelihood": '''\
def bernoulli_joint_log_likelihood(X, log_prior, log_theta):
    log_off = np.log(-np.expm1(log_theta))      # log(1 - theta)
    return np.asarray(X, dtype=float) @ (log_theta - log_off).T + log_off.sum(axis=1) + log_prior
''',
    "predict_log_proba": '''\
def predict_log_proba(joint):
    joint = np.asarray(joint, dtype=float)
    return joint - np.logaddexp.reduce(joint, axis=1, keepdims=True)
''',
    "one_hot": '''\
def one_hot(X, n_categories):
    X = np.asarray(X, dtype=int)
    blocks = [np.eye(int(k))[X[:, d]] for d, k in enumerate(np.ravel(n_categories))]
    return np.hstack(blocks)
''',
    "fit_categorical_nb": '''\
def fit_categorical_nb(X, y, n_categories, alpha):
    indicators = one_hot(X, n_categories)
    labels = np.asarray(y).astype(int)
    per_class = np.bincount(labels).astype(float)
    counts = np.zeros((per_class.size, indicators.shape[1]))
    np.add.at(counts, labels, indicators)
    K = np.repeat(np.asarray(n_categories), np.asarray(n_categories))
    theta = (counts + alpha) / (per_class[:, None] + alpha * K[None, :])
    return np.log(per_class / per_class.sum()), np.log(theta)
''',
    "categorical_joint_log_likelihood": '''\
def categorical_joint_log_likelihood(X, n_categories, log_prior, log_theta):
    cols = np.asarray(X, dtype=int) + np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(int)
    return np.stack([log_prior + log_theta[:, c].sum(axis=1) for c in cols])
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
