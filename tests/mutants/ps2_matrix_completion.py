from tests.mutants import Mutant, visible_alone, named

OBJ = ("masked_objective_visible", "masked_objective_hidden")
RMSE = ("rmse_visible", "rmse_hidden")
USERS = ("update_users_visible", "update_users_hidden")
ITEMS = ("update_items_visible", "update_items_hidden")
ALS = ("als_visible", "als_hidden")
BIASES = ("als_with_biases_visible", "als_with_biases_hidden")

_BIAS_USER_STEP = ("W = update_users(R - mu - c[None, :], mask, np.hstack([Z, ones_items]), reg)\n"
                   "        U, b = W[:, :k], W[:, k]")

MUTANTS = [
    # Question 1: the objective
    Mutant("squared error without the factor 1/2", "masked_objective",
           "0.5 * np.sum(residual ** 2)", "np.sum(residual ** 2)", OBJ),
    Mutant("sums over the unobserved entries too", "masked_objective",
           "residual = np.where(mask, R - U @ Z.T, 0.0)", "residual = R - U @ Z.T", OBJ),
    Mutant("no regularisation term", "masked_objective",
           " + 0.5 * reg * (np.sum(U ** 2) + np.sum(Z ** 2))", "", OBJ),
    Mutant("penalises only the user factors", "masked_objective",
           "(np.sum(U ** 2) + np.sum(Z ** 2))", "np.sum(U ** 2)", OBJ),
    Mutant("Frobenius norms not squared", "masked_objective",
           "(np.sum(U ** 2) + np.sum(Z ** 2))", "(np.linalg.norm(U) + np.linalg.norm(Z))", OBJ),
    # Question 2: RMSE
    Mutant("averages over every entry, observed or not", "rmse",
           "errors = (R_true - R_pred)[mask]", "errors = R_true - R_pred", RMSE),
    Mutant("forgets the square root (MSE)", "rmse",
           "np.sqrt(np.mean(errors ** 2))", "np.mean(errors ** 2)", RMSE),
    Mutant("divides by the size of the matrix, not the number of entries scored", "rmse",
           "np.mean(errors ** 2)", "np.sum(errors ** 2) / R_true.size", RMSE),
    Mutant("mean absolute error", "rmse",
           "np.sqrt(np.mean(errors ** 2))", "np.mean(np.abs(errors))", RMSE),
    # Question 3: user step
    Mutant("user step without lambda I", "update_users",
           "A = Z_i.T @ Z_i + reg * np.eye(k)", "A = Z_i.T @ Z_i", USERS),
    Mutant("user step over all movies, rated or not", "update_users",
           "rated = mask[i]", "rated = np.ones(R.shape[1], dtype=bool)", USERS),
    Mutant("user step with lambda/2 I (the 1/2 of the penalty kept)", "update_users",
           "+ reg * np.eye(k)", "+ 0.5 * reg * np.eye(k)", USERS),
    Mutant("user step reads the mask's column instead of its row", "update_users",
           "rated = mask[i]", "rated = mask[:, i]", USERS),
    Mutant("user step with the unobserved entries taken as zero ratings", "update_users",
           "Z_i = Z[rated]", "Z_i = Z; rated = slice(None); R = np.where(mask, R, 0.0)", USERS),
    # Question 4: item step
    Mutant("item step without lambda I", "update_items",
           "A = U_j.T @ U_j + reg * np.eye(k)", "A = U_j.T @ U_j", ITEMS),
    Mutant("item step over all users, raters or not", "update_items",
           "raters = mask[:, j]", "raters = np.ones(R.shape[0], dtype=bool)", ITEMS),
    Mutant("item step with lambda/2 I", "update_items",
           "+ reg * np.eye(k)", "+ 0.5 * reg * np.eye(k)", ITEMS),
    Mutant("item step reads the mask's row instead of its column", "update_items",
           "raters = mask[:, j]", "raters = mask[j]", ITEMS),
    # Question 5: ALS
    Mutant("initial factors with standard deviation 1 instead of 1/sqrt(k)", "als",
           "rng.normal(0.0, 1.0 / np.sqrt(k)", "rng.normal(0.0, 1.0", ALS),
    Mutant("both half-steps from the previous factors (not alternating)", "als",
           "        U = update_users(R, mask, Z, reg)\n        Z = update_items(R, mask, U, reg)",
           "        U_old = U if t else rng.normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[0], k))\n"
           "        U = update_users(R, mask, Z, reg)\n        Z = update_items(R, mask, U_old, reg)",
           ALS),
    Mutant("item step first, from random user factors", "als",
           "Z = rng.normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[1], k))",
           "U = rng.normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[0], k))\n"
           "    Z = update_items(R, mask, U, reg)", ALS),
    Mutant("losses recorded without the penalty", "als",
           "losses[t] = masked_objective(R, mask, U, Z, reg)",
           "losses[t] = masked_objective(R, mask, U, Z, 0.0)", ALS),
    Mutant("one sweep too few", "als",
           "for t in range(n_iters):", "for t in range(n_iters - 1):", ALS),
    # Question 6: ALS with biases
    Mutant("mean over every entry of R, observed or not", "als_with_biases",
           "mu = float(R[mask].mean())", "mu = float(R.mean())", BIASES),
    Mutant("mu re-estimated inside every sweep", "als_with_biases",
           "    for t in range(n_iters):\n",
           "    for t in range(n_iters):\n"
           "        mu = float(np.mean((R - b[:, None] - c[None, :])[mask]))\n", BIASES),
    Mutant("biases not regularised (like an intercept)", "als_with_biases",
           _BIAS_USER_STEP,
           "Zt, Rt = np.hstack([Z, ones_items]), R - mu - c[None, :]\n"
           "        P = reg * np.diag(np.r_[np.ones(k), 0.0])\n"
           "        W = np.array([np.linalg.solve(Zt[mask[i]].T @ Zt[mask[i]] + P,"
           " Zt[mask[i]].T @ Rt[i, mask[i]]) for i in range(n_users)])\n"
           "        U, b = W[:, :k], W[:, k]", BIASES),
    Mutant("user bias updated separately, ignoring the factors", "als_with_biases",
           _BIAS_USER_STEP,
           "U = update_users(R - mu - c[None, :], mask, Z, reg)\n"
           "        b = np.where(mask, R - mu - c[None, :], 0.0).sum(axis=1) / (mask.sum(axis=1) + reg)",
           BIASES),
    Mutant("user-step targets forget the movie biases", "als_with_biases",
           "update_users(R - mu - c[None, :]", "update_users(R - mu", BIASES),
    Mutant("losses without the bias penalty", "als_with_biases",
           " + 0.5 * reg * (b @ b + c @ c)", "", BIASES),
]

# Rules the questions state in words, each caught by the visible test below the answer.
MUTANTS += [visible_alone(m) for m in named(MUTANTS, "biases not regularised (like an intercept)")]
