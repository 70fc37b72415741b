"""Honest answers to ps7_mixtures_em: loops over points and components with a log-sum-exp written
out by hand; and another route, SciPy's weighted ``logsumexp`` (``b=weights``), ``np.average`` for
the weighted fits, EM as a recursion and the fit as repeated single EM steps."""

LOOPS = {
    "responsibilities": '''\
def responsibilities(x, weights, means, variances):
    x = np.asarray(x, dtype=float)
    N, K = x.size, len(weights)
    resp = np.zeros((N, K))
    total = 0.0
    for n in range(N):
        logs = []
        for k in range(K):
            logs.append(np.log(weights[k]) - 0.5 * np.log(2 * np.pi * variances[k])
                        - (x[n] - means[k]) ** 2 / (2 * variances[k]))
        top = max(logs)
        s = sum(np.exp(a - top) for a in logs)
        log_p = top + np.log(s)
        for k in range(K):
            resp[n, k] = np.exp(logs[k] - log_p)
        total += log_p
    return resp, float(total)
''',
    "m_step": '''\
def m_step(x, resp):
    x = np.asarray(x, dtype=float)
    resp = np.asarray(resp, dtype=float)
    N, K = resp.shape
    weights, means, variances = np.zeros(K), np.zeros(K), np.zeros(K)
    for k in range(K):
        Nk = 0.0
        sx = 0.0
        for n in range(N):
            Nk += resp[n, k]
            sx += resp[n, k] * x[n]
        mu = sx / Nk
        ss = 0.0
        for n in range(N):
            ss += resp[n, k] * (x[n] - mu) ** 2
        weights[k], means[k], variances[k] = Nk / N, mu, ss / Nk
    return weights, means, variances
''',
    "em": '''\
def em(x, weights, means, variances, n_iter):
    w, m, v = weights, means, variances
    r, ll = responsibilities(x, w, m, v)
    history = np.zeros(n_iter + 1)
    history[0] = ll
    t = 0
    while t < n_iter:
        w, m, v = m_step(x, r)
        r, ll = responsibilities(x, w, m, v)
        t += 1
        history[t] = ll
    return w, m, v, history
''',
    "fit_mixture": '''\
def fit_mixture(x, weights, means, variances, tol=1e-10, max_iter=1000):
    x = np.asarray(x, dtype=float)
    w, m, v = weights, means, variances
    r, ll = responsibilities(x, w, m, v)
    it = 0
    while it < max_iter:
        w, m, v = m_step(x, r)
        r, new = responsibilities(x, w, m, v)
        it += 1
        gain = (new - ll) / len(x)
        ll = new
        if gain < tol:
            break
    return w, m, v, ll
''',
}

ROUTE = {
    "responsibilities": '''\
def responsibilities(x, weights, means, variances):
    x = np.asarray(x, dtype=float).reshape(-1, 1)
    w = np.asarray(weights, dtype=float)
    s2 = np.asarray(variances, dtype=float)
    log_normal = -((x - np.asarray(means, dtype=float)) ** 2 / s2 + np.log(2 * np.pi * s2)) / 2
    log_p = logsumexp(log_normal, b=w, axis=1)          # log sum_k w_k N_k, the weights as b
    return w * np.exp(log_normal - log_p[:, None]), float(log_p.sum())
''',
    "m_step": '''\
def m_step(x, resp):
    x = np.asarray(x, dtype=float)
    resp = np.asarray(resp, dtype=float)
    means = np.array([np.average(x, weights=r) for r in resp.T])
    variances = np.array([np.average((x - mu) ** 2, weights=r) for mu, r in zip(means, resp.T)])
    return resp.mean(axis=0), means, variances
''',
    "em": '''\
def em(x, weights, means, variances, n_iter):
    r, ll = responsibilities(x, weights, means, variances)
    if n_iter == 0:
        return (np.asarray(weights, dtype=float), np.asarray(means, dtype=float),
                np.asarray(variances, dtype=float), np.array([ll]))
    w, m, v, rest = em(x, *m_step(x, r), n_iter - 1)
    return w, m, v, np.concatenate([[ll], rest])
''',
    "fit_mixture": '''\
def fit_mixture(x, weights, means, variances, tol=1e-10, max_iter=1000):
    n = np.size(x)
    params = (weights, means, variances)
    for _ in range(max_iter):
        *params, history = em(x, *params, 1)
        if history[1] - history[0] < tol * n:
            break
    return (*params, float(history[-1]))
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
