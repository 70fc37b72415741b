"""Honest answers to ps2_matrix_completion: explicit loops over the ratings, and batched solves
(einsum over users, the item step as the user step of the transposed problem)."""

LOOPS = {
    "masked_objective": '''\
def masked_objective(R, mask, U, Z, reg):
    total = 0.0
    n, m = R.shape
    for i in range(n):
        for j in range(m):
            if mask[i, j]:
                total += (R[i, j] - U[i] @ Z[j]) ** 2
    return 0.5 * total + 0.5 * reg * (np.linalg.norm(U) ** 2 + np.linalg.norm(Z) ** 2)
''',
    "rmse": '''\
def rmse(R_true, R_pred, mask):
    s, count = 0.0, 0
    for i, j in zip(*np.nonzero(mask)):
        s += (R_true[i, j] - R_pred[i, j]) ** 2
        count += 1
    return float(np.sqrt(s / count))
''',
    "update_users": '''\
def update_users(R, mask, Z, reg):
    n, k = R.shape[0], Z.shape[1]
    U = np.empty((n, k))
    for i in range(n):
        A = reg * np.eye(k)
        rhs = np.zeros(k)
        for j in range(R.shape[1]):
            if mask[i, j]:
                A += np.outer(Z[j], Z[j])
                rhs += R[i, j] * Z[j]
        U[i] = np.linalg.solve(A, rhs)
    return U
''',
    "update_items": '''\
def update_items(R, mask, U, reg):
    m, k = R.shape[1], U.shape[1]
    Z = np.empty((m, k))
    for j in range(m):
        A = reg * np.eye(k)
        rhs = np.zeros(k)
        for i in range(R.shape[0]):
            if mask[i, j]:
                A += np.outer(U[i], U[i])
                rhs += R[i, j] * U[i]
        Z[j] = np.linalg.solve(A, rhs)
    return Z
''',
    "als": '''\
def als(R, mask, k, reg, n_iters, seed):
    rng = np.random.default_rng(seed)
    Z = rng.normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[1], k))
    U = None
    history = []
    for _ in range(n_iters):
        U = update_users(R, mask, Z, reg)
        Z = update_items(R, mask, U, reg)
        history.append(masked_objective(R, mask, U, Z, reg))
    return U, Z, np.array(history)
''',
    "als_with_biases": '''\
def als_with_biases(R, mask, k, reg, n_iters, seed):
    n, m = R.shape
    mu = R[mask].sum() / mask.sum()
    rng = np.random.default_rng(seed)
    Z = rng.normal(0.0, 1.0 / np.sqrt(k), size=(m, k))
    b, c = np.zeros(n), np.zeros(m)
    U = np.zeros((n, k))
    losses = []
    for _ in range(n_iters):
        Zt = np.column_stack([Z, np.ones(m)])
        for i in range(n):
            obs = mask[i]
            A = Zt[obs].T @ Zt[obs] + reg * np.eye(k + 1)
            sol = np.linalg.solve(A, Zt[obs].T @ (R[i, obs] - mu - c[obs]))
            U[i], b[i] = sol[:k], sol[k]
        Ut = np.column_stack([U, np.ones(n)])
        for j in range(m):
            obs = mask[:, j]
            A = Ut[obs].T @ Ut[obs] + reg * np.eye(k + 1)
            sol = np.linalg.solve(A, Ut[obs].T @ (R[obs, j] - mu - b[obs]))
            Z[j], c[j] = sol[:k], sol[k]
        err = (R - mu - b[:, None] - c[None, :] - U @ Z.T)[mask]
        losses.append(0.5 * err @ err
                      + 0.5 * reg * (np.sum(U ** 2) + np.sum(Z ** 2) + b @ b + c @ c))
    return U, Z, b, c, mu, np.array(losses)
''',
}

ROUTE = {
    "masked_objective": '''\
def masked_objective(R, mask, U, Z, reg):
    e = (R - U @ Z.T)[mask]
    return float(0.5 * (e @ e + reg * np.vdot(U, U) + reg * np.vdot(Z, Z)))
''',
    "rmse": '''\
def rmse(R_true, R_pred, mask):
    sq = np.where(mask, R_true - R_pred, 0.0) ** 2
    return float(np.sqrt(np.sum(sq) / np.count_nonzero(mask)))
''',
    "update_users": '''\
def update_users(R, mask, Z, reg):
    W = mask.astype(float)
    k = Z.shape[1]
    grams = np.einsum("ij,jk,jl->ikl", W, Z, Z) + reg * np.eye(k)
    rhs = np.where(mask, R, 0.0) @ Z
    return np.linalg.solve(grams, rhs[:, :, None])[:, :, 0]
''',
    "update_items": '''\
def update_items(R, mask, U, reg):
    # the item step is the user step of the transposed problem
    return update_users(R.T, mask.T, U, reg)
''',
    "als": '''\
def als(R, mask, k, reg, n_iters, seed):
    gen = np.random.default_rng(seed)
    items = gen.normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[1], k))
    objective = np.empty(n_iters)
    t = 0
    while t < n_iters:
        users = update_users(R, mask, items, reg)
        items = update_items(R, mask, users, reg)
        objective[t] = masked_objective(R, mask, users, items, reg)
        t += 1
    return users, items, objective
''',
    "als_with_biases": '''\
def _ridge_rows(T, M, F, reg):
    """Row-wise ridge regressions of the observed entries of T on the factors F."""
    W = M.astype(float)
    grams = np.einsum("ij,jk,jl->ikl", W, F, F) + reg * np.eye(F.shape[1])
    return np.linalg.solve(grams, (np.where(M, T, 0.0) @ F)[:, :, None])[:, :, 0]


def als_with_biases(R, mask, k, reg, n_iters, seed):
    mu = float(np.mean(R[mask]))
    Z = np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[1], k))
    c = np.zeros(R.shape[1])
    trace = []
    for _ in range(n_iters):
        P = _ridge_rows(R - mu - c, mask, np.c_[Z, np.ones(R.shape[1])], reg)
        U, b = P[:, :-1], P[:, -1]
        Q = _ridge_rows((R - mu - b[:, None]).T, mask.T, np.c_[U, np.ones(R.shape[0])], reg)
        Z, c = Q[:, :-1], Q[:, -1]
        fit = np.where(mask, R - mu - b[:, None] - c - U @ Z.T, 0.0)
        trace.append(0.5 * np.sum(fit ** 2)
                     + 0.5 * reg * (np.sum(U * U) + np.sum(Z * Z) + np.sum(b * b) + np.sum(c * c)))
    return U, Z, b, c, mu, np.asarray(trace)
''',
}

SOLUTIONS = {"loops": LOOPS, "route": ROUTE}
