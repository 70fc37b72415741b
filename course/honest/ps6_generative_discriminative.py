"""Honest answers to ps6_generative_discriminative: loops over rows, classes and samples, and
other decompositions (log-sum-exp, sums by np.add.at, the pooled variance from the class fits,
the bias as a column of ones)."""

LOOPS = {
    "softmax": '''\
def softmax(Z):
    Z = np.asarray(Z, dtype=float)
    out = np.empty_like(Z)
    for i, row in enumerate(Z):
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return out
''',
    "fit_gaussian_nb": '''\
def fit_gaussian_nb(X, y):
    C = int(np.max(y)) + 1
    means = np.zeros((C, X.shape[1]))
    variances = np.zeros((C, X.shape[1]))
    log_prior = np.zeros(C)
    for c in range(C):
        Xc = X[y == c]
        means[c] = Xc.mean(axis=0)
        variances[c] = Xc.var(axis=0)
        log_prior[c] = np.log(len(Xc) / len(X))
    return means, variances, log_prior
''',
    "gaussian_nb_log_posterior": '''\
def gaussian_nb_log_posterior(X, means, variances, log_prior):
    N, C = X.shape[0], means.shape[0]
    jll = np.zeros((N, C))
    for c in range(C):
        jll[:, c] = log_prior[c] - 0.5 * np.sum(np.log(2 * np.pi * variances[c])
                                                + (X - means[c]) ** 2 / variances[c], axis=1)
    for n in range(N):
        m = jll[n].max()
        jll[n] = jll[n] - m - np.log(np.sum(np.exp(jll[n] - m)))
    return jll
''',
    "shared_variance_weights": '''\
def shared_variance_weights(X, y):
    C = int(np.max(y)) + 1
    means = np.zeros((C, X.shape[1]))
    counts = np.zeros(C)
    for c in range(C):
        means[c] = X[y == c].mean(axis=0)
        counts[c] = np.sum(y == c)
    ss = 0.0
    for n in range(X.shape[0]):
        ss += np.sum((X[n] - means[y[n]]) ** 2)
    sigma2 = ss / X.size
    W = means / sigma2
    w0 = np.array([np.log(counts[c]) - means[c] @ means[c] / (2 * sigma2) for c in range(C)])
    return W, w0
''',
    "cross_entropy_and_gradient": '''\
def cross_entropy_and_gradient(W, b, X, Y, reg):
    loss = 0.5 * reg * np.sum(W * W)
    gW = reg * np.array(W, dtype=float)
    gb = np.zeros(W.shape[0])
    for n in range(X.shape[0]):
        z = W @ X[n] + b
        m = z.max()
        lse = m + np.log(np.sum(np.exp(z - m)))
        loss += lse - Y[n] @ z
        p = np.exp(z - lse)
        gW += np.outer(p - Y[n], X[n])
        gb += p - Y[n]
    return float(loss), gW, gb
''',
    "fit_logistic_regression": '''\
def fit_logistic_regression(X, y, reg, lr, n_iter):
    n, d = X.shape
    C = int(np.max(y)) + 1
    Y = np.zeros((n, C))
    Y[np.arange(n), y] = 1
    W = np.zeros((C, d))
    b = np.zeros(C)
    it = 0
    while it < n_iter:
        _, gW, gb = cross_entropy_and_gradient(W, b, X, Y, reg)
        W -= (lr / n) * gW
        b -= (lr / n) * gb
        it += 1
    return W, b
''',
}

ROUTE = {
    "softmax": '''\
def softmax(Z):
    return np.exp(Z - np.logaddexp.reduce(Z, axis=1, keepdims=True))
''',
    "fit_gaussian_nb": '''\
def fit_gaussian_nb(X, y):
    labels = np.asarray(y).astype(int)
    counts = np.bincount(labels).astype(float)
    sums = np.zeros((counts.size, X.shape[1]))
    np.add.at(sums, labels, X)
    means = sums / counts[:, None]
    squares = np.zeros_like(sums)
    np.add.at(squares, labels, (X - means[labels]) ** 2)
    return means, squares / counts[:, None], np.log(counts) - np.log(len(labels))
''',
    "gaussian_nb_log_posterior": '''\
def gaussian_nb_log_posterior(X, means, variances, log_prior):
    precision = 1.0 / variances
    quad = (X ** 2) @ precision.T - 2 * X @ (means * precision).T + np.sum(means ** 2 * precision, axis=1)
    scores = log_prior - 0.5 * np.log(2 * np.pi * variances).sum(axis=1) - 0.5 * quad
    return scores - np.logaddexp.reduce(scores, axis=1, keepdims=True)
''',
    "shared_variance_weights": '''\
def shared_variance_weights(X, y):
    means, variances, log_prior = fit_gaussian_nb(X, y)
    pooled = np.sum(np.exp(log_prior)[:, None] * variances) / X.shape[1]
    return means / pooled, log_prior + np.log(len(y)) - 0.5 * np.sum(means * means, axis=1) / pooled
''',
    "cross_entropy_and_gradient": '''\
def cross_entropy_and_gradient(W, b, X, Y, reg):
    logits = X @ W.T + b
    P = softmax(logits)
    value = (np.sum(np.logaddexp.reduce(logits, axis=1)) - np.einsum("nc,nc->", Y, logits)
             + reg / 2 * np.vdot(W, W))
    return float(value), (P - Y).T @ X + reg * W, (P - Y).sum(axis=0)
''',
    "fit_logistic_regression": '''\
def fit_logistic_regression(X, y, reg, lr, n_iter):
    n, d = X.shape
    Y = np.eye(int(y.max()) + 1)[y]
    Xa = np.hstack([X, np.ones((n, 1))])
    theta = np.zeros((Y.shape[1], d + 1))
    for _ in range(n_iter):
        G = (softmax(Xa @ theta.T) - Y).T @ Xa
        G[:, :d] += reg * theta[:, :d]
        theta = theta - lr * G / n
    return theta[:, :d], theta[:, d]
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
