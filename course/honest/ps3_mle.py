"""Honest answers to ps3_mle: explicit loops (and Newton's method from Minka's start), and
log-densities written with scipy.special's xlogy / xlog1py / gammaln and a bracketing root finder
written by hand (the rules forbid scipy.stats and scipy.optimize)."""

LOOPS = {
    "bernoulli_log_likelihood": '''\
def bernoulli_log_likelihood(theta, x):
    x = np.asarray(x)
    heads = int(np.count_nonzero(x))
    tails = x.size - heads
    th = np.asarray(theta, dtype=float)
    out = np.zeros(th.shape)
    flat = out.reshape(-1)
    for idx, t in enumerate(th.reshape(-1)):
        ll = 0.0
        if heads:
            ll += heads * np.log(t)
        if tails:
            ll += tails * np.log1p(-t)
        flat[idx] = ll
    return float(out) if out.ndim == 0 else out
''',
    "gaussian_mle": '''\
def gaussian_mle(x):
    values = [float(v) for v in np.ravel(x)]
    n = len(values)
    mu = sum(values) / n
    var = 0.0
    for v in values:
        var += (v - mu) ** 2
    return mu, (var / n) ** 0.5
''',
    "categorical_mle": '''\
def categorical_mle(x, n_categories):
    counts = np.zeros(n_categories)
    for value in np.ravel(x):
        counts[int(value)] += 1
    return counts / counts.sum()
''',
    "gamma_log_likelihood": '''\
def gamma_log_likelihood(x, shape, rate):
    total = 0.0
    const = shape * np.log(rate) - gammaln(shape)
    for xi in np.ravel(x):
        total += const + (shape - 1) * np.log(xi) - rate * xi
    return float(total)
''',
    "gamma_score": '''\
def gamma_score(x, shape, rate):
    d_a, d_b = 0.0, 0.0
    for xi in np.ravel(np.asarray(x, dtype=float)):
        d_a += np.log(rate) - digamma(shape) + np.log(xi)
        d_b += shape / rate - xi
    return np.array([d_a, d_b])
''',
    "gamma_mle": '''\
def gamma_mle(x, tol=1e-10, max_iter=100):
    x = np.asarray(x, dtype=float)
    m = x.mean()
    s = np.log(m) - np.log(x).mean()
    shape = (3 - s + np.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)   # Minka's starting point
    it = 0
    while it < max_iter:
        g = np.log(shape) - digamma(shape) - s
        dg = 1 / shape - polygamma(1, shape)
        new = shape - g / dg
        done = abs(new - shape) <= tol * new
        shape = new
        it += 1
        if done:
            break
    return float(shape), float(shape / m)
''',
}

ROUTE = {
    "bernoulli_log_likelihood": '''\
def bernoulli_log_likelihood(theta, x):
    t = np.asarray(theta, dtype=float)
    obs = np.asarray(x).reshape((-1,) + (1,) * t.ndim)
    ll = (xlogy(obs, t) + xlog1py(1 - obs, -t)).sum(axis=0)
    return float(ll) if np.ndim(ll) == 0 else ll
''',
    "gaussian_mle": '''\
def gaussian_mle(x):
    return float(np.mean(x)), float(np.std(x))
''',
    "categorical_mle": '''\
def categorical_mle(x, n_categories):
    onehot = np.asarray(x)[:, None] == np.arange(n_categories)[None, :]
    return onehot.mean(axis=0)
''',
    "gamma_log_likelihood": '''\
def gamma_log_likelihood(x, shape, rate):
    x = np.asarray(x, dtype=float)
    return float(np.sum(xlogy(shape - 1.0, x) - rate * x)
                 + x.size * (xlogy(shape, rate) - gammaln(shape)))
''',
    "gamma_score": '''\
def gamma_score(x, shape, rate):
    x = np.asarray(x, dtype=float)
    return np.array([np.sum(np.log(rate * x)) - len(x) * digamma(shape),
                     len(x) * shape / rate - x.sum()])
''',
    "gamma_mle": '''\
def gamma_mle(x, tol=1e-10, max_iter=100):
    x = np.asarray(x, dtype=float)
    gap = np.log(np.mean(x)) - np.mean(np.log(x))
    lo, hi = 1e-10, 1e10  # log(a) - digamma(a) falls from +inf to 0: bisect in log a
    while hi / lo - 1 > 1e-15:
        mid = np.sqrt(lo * hi)
        if np.log(mid) - digamma(mid) > gap:
            lo = mid
        else:
            hi = mid
    alpha = np.sqrt(lo * hi)
    return float(alpha), float(alpha / np.mean(x))
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
