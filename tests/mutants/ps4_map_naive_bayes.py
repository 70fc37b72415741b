from tests.mutants import Mutant

_BETA = ("beta_map_visible", "beta_map_hidden")
_FIT_B = ("fit_bernoulli_nb_visible", "fit_bernoulli_nb_hidden")
_JOINT_B = ("bernoulli_joint_log_likelihood_visible", "bernoulli_joint_log_likelihood_hidden")
_PROBA = ("predict_log_proba_visible", "predict_log_proba_hidden")
_ONE_HOT = ("one_hot_visible", "one_hot_hidden")
_FIT_C = ("fit_categorical_nb_visible", "fit_categorical_nb_hidden")
_JOINT_C = ("categorical_joint_log_likelihood_visible", "categorical_joint_log_likelihood_hidden")

_BETA_RETURN = "return (n_ones + a - 1) / (n_ones + n_zeros + a + b - 2)"
_THETA_B = "theta = (N_jc + alpha) / (N_c[:, None] + 2 * alpha)"
_JOINT_B_RETURN = "return X @ log_theta.T + (1.0 - X) @ log_1m_theta.T + log_prior"
_LSE = "log_evidence = m + np.log(np.exp(joint - m).sum(axis=1, keepdims=True))"

MUTANTS = [
    # Question 1: beta_map
    Mutant("posterior mean instead of the mode (no -1 / -2)", "beta_map", _BETA_RETURN,
           "return (n_ones + a) / (n_ones + n_zeros + a + b)", _BETA),
    Mutant("a and b swapped", "beta_map", _BETA_RETURN,
           "return (n_ones + b - 1) / (n_ones + n_zeros + a + b - 2)", _BETA),
    Mutant("-1 instead of -2 in the denominator", "beta_map", _BETA_RETURN,
           "return (n_ones + a - 1) / (n_ones + n_zeros + a + b - 1)", _BETA),
    Mutant("ignores the prior (the MLE)", "beta_map", _BETA_RETURN,
           "return n_ones / (n_ones + n_zeros)", _BETA),
    # Question 3: fit_bernoulli_nb
    Mutant("alpha not doubled in the denominator", "fit_bernoulli_nb", _THETA_B,
           "theta = (N_jc + alpha) / (N_c[:, None] + alpha)", _FIT_B),
    Mutant("prior not logged", "fit_bernoulli_nb", "log_prior = np.log(N_c / N_c.sum())",
           "log_prior = N_c / N_c.sum()", _FIT_B),
    Mutant("prior not normalised", "fit_bernoulli_nb", "log_prior = np.log(N_c / N_c.sum())",
           "log_prior = np.log(N_c)", _FIT_B),
    Mutant("Beta(alpha, alpha) read as add-alpha (counts off by one)", "fit_bernoulli_nb", _THETA_B,
           "theta = (N_jc + alpha - 1) / (N_c[:, None] + 2 * alpha - 2)", _FIT_B),
    Mutant("unsmoothed MLE", "fit_bernoulli_nb", _THETA_B, "theta = N_jc / N_c[:, None]", _FIT_B),
    Mutant("one class too few (off-by-one)", "fit_bernoulli_nb", "C = int(y.max()) + 1",
           "C = int(y.max())", _FIT_B),
    # Question 4: bernoulli_joint_log_likelihood
    Mutant("forgets the (1 - x) log(1 - theta) term", "bernoulli_joint_log_likelihood",
           _JOINT_B_RETURN, "return X @ log_theta.T + log_prior", _JOINT_B),
    Mutant("forgets the prior", "bernoulli_joint_log_likelihood", _JOINT_B_RETURN,
           "return X @ log_theta.T + (1.0 - X) @ log_1m_theta.T", _JOINT_B),
    Mutant("transposed result (classes x samples)", "bernoulli_joint_log_likelihood",
           _JOINT_B_RETURN,
           "return (X @ log_theta.T + (1.0 - X) @ log_1m_theta.T).T + log_prior[:, None]", _JOINT_B),
    Mutant("log(1 - theta) taken as 1 - log(theta)", "bernoulli_joint_log_likelihood",
           "log_1m_theta = np.log1p(-np.exp(log_theta))", "log_1m_theta = 1 - log_theta", _JOINT_B),
    # Question 5: predict_log_proba
    Mutant("no normalisation", "predict_log_proba", "return joint - log_evidence",
           "return joint", _PROBA),
    Mutant("normalises over the wrong axis", "predict_log_proba",
           "m = joint.max(axis=1, keepdims=True)\n    " + _LSE,
           "m = joint.max(axis=0, keepdims=True)\n    "
           "log_evidence = m + np.log(np.exp(joint - m).sum(axis=0, keepdims=True))", _PROBA),
    Mutant("naive log(sum(exp)) that under/overflows", "predict_log_proba", _LSE,
           "log_evidence = np.log(np.exp(joint).sum(axis=1, keepdims=True))", _PROBA),
    Mutant("subtracts the maximum but forgets to add it back", "predict_log_proba", _LSE,
           "log_evidence = np.log(np.exp(joint - m).sum(axis=1, keepdims=True))", _PROBA),
    # Question 8: one_hot
    Mutant("no per-feature offsets", "one_hot", "X + offsets] = 1.0", "X] = 1.0", _ONE_HOT),
    Mutant("offsets shifted by one feature (inclusive cumsum)", "one_hot",
           "offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]])",
           "offsets = np.cumsum(n_categories)", _ONE_HOT),
    Mutant("infers K_d from the data instead of n_categories", "one_hot",
           "n_categories = np.asarray(n_categories, dtype=int)",
           "n_categories = X.max(axis=0) + 1", _ONE_HOT),
    # Question 9: fit_categorical_nb
    Mutant("Bernoulli denominator N_c + 2 alpha copied", "fit_categorical_nb",
           "np.log(N_c[:, None] + alpha * K_d)", "np.log(N_c[:, None] + 2 * alpha)", _FIT_C),
    Mutant("alpha not multiplied by K_d", "fit_categorical_nb",
           "np.log(N_c[:, None] + alpha * K_d)", "np.log(N_c[:, None] + alpha)", _FIT_C),
    Mutant("number of features D instead of K_d", "fit_categorical_nb",
           "K_d = np.repeat(n_categories, n_categories)", "K_d = len(n_categories)", _FIT_C),
    Mutant("alpha missing from the numerator", "fit_categorical_nb",
           "np.log(counts + alpha)", "np.log(counts)", _FIT_C),
    Mutant("prior not normalised", "fit_categorical_nb", "log_prior = np.log(N_c / N_c.sum())",
           "log_prior = np.log(N_c)", _FIT_C),
    # Question 10: categorical_joint_log_likelihood
    Mutant("forgets the prior", "categorical_joint_log_likelihood",
           "return X1 @ log_theta.T + log_prior", "return X1 @ log_theta.T", _JOINT_C),
    Mutant("log of a sum of probabilities instead of a sum of logs",
           "categorical_joint_log_likelihood", "return X1 @ log_theta.T + log_prior",
           "return np.log(X1 @ np.exp(log_theta).T) + log_prior", _JOINT_C),
    Mutant("Bernoulli (1 - x) log(1 - theta) terms copied", "categorical_joint_log_likelihood",
           "return X1 @ log_theta.T + log_prior",
           "return X1 @ log_theta.T + (1.0 - X1) @ np.log1p(-np.exp(log_theta)).T + log_prior",
           _JOINT_C),
    Mutant("prior as a probability, not a log", "categorical_joint_log_likelihood",
           "return X1 @ log_theta.T + log_prior", "return X1 @ log_theta.T + np.exp(log_prior)",
           _JOINT_C),
]

# Rules the questions state in words, each caught by the visible test below the answer.
MUTANTS += [
    Mutant("replaces -inf by the most negative float", "predict_log_proba",
           "joint = np.asarray(joint, dtype=float)",
           "joint = np.nan_to_num(np.asarray(joint, dtype=float))", ("predict_log_proba_visible",)),
]
