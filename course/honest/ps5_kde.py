"""Honest answers to ps5_kde: loops over points, and Gaussian log-densities written out with a
weighted logsumexp (the leave-one-out sum by a zero weight on the diagonal) and scipy's
log_softmax (the rules forbid only ``scipy.stats`` of SciPy)."""

LOOPS = {
    "kernels": '''\
def uniform_kernel(u):
    u = np.asarray(u, dtype=float)
    out = np.zeros(u.shape)
    for idx in np.ndindex(u.shape):
        if abs(u[idx]) <= 1:
            out[idx] = 0.5
    return out


def epanechnikov_kernel(u):
    u = np.asarray(u, dtype=float)
    out = np.zeros(u.shape)
    for idx in np.ndindex(u.shape):
        v = u[idx]
        if abs(v) < 1:
            out[idx] = 0.75 * (1 - v * v)
    return out
''',
    "kde_pdf": '''\
def kde_pdf(x_query, data, h, kernel="gaussian"):
    if kernel == "gaussian":
        K = gaussian_kernel
    elif kernel == "uniform":
        K = uniform_kernel
    elif kernel == "epanechnikov":
        K = epanechnikov_kernel
    else:
        raise ValueError(f"unknown kernel {kernel}")
    data = np.asarray(data, dtype=float)
    xs = np.asarray(x_query, dtype=float)
    out = np.empty(xs.shape[0])
    for i, x in enumerate(xs):
        out[i] = np.mean(K((x - data) / h)) / h
    return out
''',
    "bandwidth_rules": '''\
def scott_bandwidth(data):
    x = [float(v) for v in np.ravel(data)]
    n = len(x)
    m = sum(x) / n
    s = (sum((v - m) ** 2 for v in x) / (n - 1)) ** 0.5
    return s * n ** -0.2


def silverman_bandwidth(data):
    return scott_bandwidth(data) * 0.75 ** -0.2
''',
    "loo_log_likelihood": '''\
def loo_log_likelihood(data, h):
    x = np.asarray(data, dtype=float)
    n = len(x)
    total = 0.0
    for i in range(n):
        others = np.delete(x, i)
        total += logsumexp(-0.5 * ((x[i] - others) / h) ** 2) - np.log((n - 1) * h * np.sqrt(2 * np.pi))
    return float(total)
''',
    "select_bandwidth": '''\
def select_bandwidth(data, candidates):
    best_h, best_score = None, -np.inf
    scores = []
    for h in candidates:
        s = loo_log_likelihood(data, h)
        scores.append(s)
        if s > best_score:
            best_h, best_score = h, s
    return float(best_h), np.array(scores)
''',
    "kde_naive_bayes": '''\
def kde_naive_bayes_log_proba(X_train, y_train, X_test, h):
    X_train = np.asarray(X_train, dtype=float)
    X_test = np.asarray(X_test, dtype=float)
    y_train = np.asarray(y_train)
    labels = np.unique(y_train)
    out = np.zeros((X_test.shape[0], len(labels)))
    for ci, lab in enumerate(labels):
        Xc = X_train[y_train == lab]
        nc = Xc.shape[0]
        out[:, ci] = np.log(nc / len(y_train))
        for d in range(X_test.shape[1]):
            diffs = (X_test[:, d][:, None] - Xc[:, d][None, :]) / h
            out[:, ci] += logsumexp(-0.5 * diffs ** 2, axis=1) - np.log(nc * h * np.sqrt(2 * np.pi))
    return out - logsumexp(out, axis=1, keepdims=True)
''',
}

ROUTE = {
    "kernels": '''\
def uniform_kernel(u):
    return 0.5 * (np.abs(np.asarray(u, dtype=float)) <= 1)


def epanechnikov_kernel(u):
    return np.maximum(0.0, 0.75 * (1.0 - np.square(np.asarray(u, dtype=float))))
''',
    "kde_pdf": '''\
KERNELS = {"gaussian": gaussian_kernel, "uniform": uniform_kernel,
           "epanechnikov": epanechnikov_kernel}


def kde_pdf(x_query, data, h, kernel="gaussian"):
    try:
        K = KERNELS[kernel]
    except KeyError:
        raise ValueError(kernel) from None
    scaled = np.subtract.outer(np.asarray(x_query, dtype=float), np.asarray(data, dtype=float)) / h
    return K(scaled).mean(axis=1) / h
''',
    "bandwidth_rules": '''\
def scott_bandwidth(data):
    return float(np.std(data, ddof=1) / np.size(data) ** 0.2)


def silverman_bandwidth(data):
    return float((4 / (3 * np.size(data))) ** 0.2 * np.std(data, ddof=1))
''',
    "loo_log_likelihood": '''\
def loo_log_likelihood(data, h):
    x = np.asarray(data, dtype=float)
    n = x.size
    L = -0.5 * ((x[:, None] - x[None, :]) / h) ** 2 - np.log(h * np.sqrt(2 * np.pi))
    return float(np.sum(logsumexp(L, axis=1, b=1.0 - np.eye(n))) - n * np.log(n - 1))
''',
    "select_bandwidth": '''\
def select_bandwidth(data, candidates):
    scores = np.fromiter((loo_log_likelihood(data, float(h)) for h in candidates), dtype=float)
    first_best = int(np.flatnonzero(scores == scores.max())[0])
    return float(np.asarray(candidates)[first_best]), scores
''',
    "kde_naive_bayes": '''\
from scipy.special import log_softmax


def kde_naive_bayes_log_proba(X_train, y_train, X_test, h):
    X_train, X_test = np.asarray(X_train, dtype=float), np.asarray(X_test, dtype=float)
    y_train = np.asarray(y_train)
    parts = []
    for lab in np.unique(y_train):
        Xc = X_train[y_train == lab]
        L = -0.5 * ((X_test[:, None, :] - Xc[None, :, :]) / h) ** 2 - np.log(h * np.sqrt(2 * np.pi))
        parts.append(np.log(len(Xc) / len(y_train))
                     + np.sum(logsumexp(L, axis=1) - np.log(len(Xc)), axis=1))
    return log_softmax(np.column_stack(parts), axis=1)
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
