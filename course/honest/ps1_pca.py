"""Honest answers to ps1_pca: explicit loops, and another route (np.cov, einsum, the spectrum)."""

LOOPS = {
    "center": '''\
def center(X):
    N, D = X.shape
    mu = np.zeros(D)
    for j in range(D):
        mu[j] = sum(X[:, j]) / N
    Xc = np.empty((N, D))
    for i in range(N):
        Xc[i] = X[i] - mu
    return Xc, mu
''',
    "pca_eig": '''\
def pca_eig(X, k):
    Xc, _ = center(X)
    N, D = Xc.shape
    C = np.zeros((D, D))
    for row in Xc:
        C += np.outer(row, row)
    C /= N
    lam, V = np.linalg.eigh(C)
    idx = sorted(range(D), key=lambda i: -lam[i])[:k]
    return np.array([V[:, i] for i in idx]), np.array([lam[i] for i in idx])
''',
    "pca_svd": '''\
def pca_svd(X, k):
    Xc, _ = center(X)
    U, sv, Vt = np.linalg.svd(Xc, full_matrices=False)
    variances = []
    for i in range(k):
        variances.append(sv[i] * sv[i] / len(X))
    return Vt[:k, :], np.array(variances)
''',
    "project": '''\
def project(X, mean, components):
    Z = np.zeros((X.shape[0], components.shape[0]))
    for i in range(X.shape[0]):
        for j in range(components.shape[0]):
            Z[i, j] = np.dot(X[i] - mean, components[j])
    return Z


def reconstruct(Z, mean, components):
    out = np.tile(np.asarray(mean, dtype=float), (Z.shape[0], 1))
    for j in range(components.shape[0]):
        out += np.outer(Z[:, j], components[j])
    return out
''',
    "best_rank_k": '''\
def best_rank_k(X, k):
    U, S, VT = np.linalg.svd(X)
    approx = np.zeros(X.shape)
    for i in range(min(k, len(S))):
        approx += S[i] * np.outer(U[:, i], VT[i])
    return approx
''',
    "reconstruction_error": '''\
def reconstruction_error(X, k):
    mu = X.mean(axis=0)
    W, _ = pca_eig(X, k)
    total = 0.0
    for x in X:
        r = (x - mu) - W.T @ (W @ (x - mu))
        total += float(r @ r)
    return total
''',
    "components_for_variance": '''\
def components_for_variance(X, fraction):
    mu = X.mean(axis=0)
    total = sum(float((x - mu) @ (x - mu)) for x in X)
    k = 1
    while reconstruction_error(X, k) > (1 - fraction) * total:
        k += 1
    return k
''',
}

ROUTE = {
    "center": '''\
def center(X):
    ones = np.ones(X.shape[0])
    m = ones @ X / X.shape[0]
    return X - np.outer(ones, m), m
''',
    "pca_eig": '''\
def pca_eig(X, k):
    C = np.atleast_2d(np.cov(X, rowvar=False, bias=True))
    w, v = np.linalg.eigh(C)
    w, v = w[::-1], v[:, ::-1]
    return v[:, :k].T.copy(), w[:k].copy()
''',
    "pca_svd": '''\
def pca_svd(X, k):
    n = X.shape[0]
    B = (X - X.mean(0)) / np.sqrt(n)
    _, sigma, VT = np.linalg.svd(B)
    return VT[:k], sigma[:k] ** 2
''',
    "project": '''\
def project(X, mean, components):
    return np.einsum("nd,kd->nk", X - mean[None, :], components)


def reconstruct(Z, mean, components):
    return np.einsum("nk,kd->nd", Z, components) + mean[None, :]
''',
    "best_rank_k": '''\
def best_rank_k(X, k):
    U, S, VT = np.linalg.svd(X, full_matrices=False)
    kept = np.concatenate([S[:k], np.zeros(max(len(S) - k, 0))])
    return U @ np.diag(kept) @ VT
''',
    "reconstruction_error": '''\
def reconstruction_error(X, k):
    spectrum = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    return float(np.sum(spectrum[k:] ** 2))
''',
    "components_for_variance": '''\
def components_for_variance(X, fraction):
    lam = np.linalg.eigvalsh(np.cov(X, rowvar=False, bias=True))[::-1]
    return int(np.searchsorted(np.cumsum(lam), fraction * lam.sum()) + 1)
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
