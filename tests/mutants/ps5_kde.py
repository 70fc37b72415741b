from tests.mutants import Mutant

KERNELS = ("kernels_visible", "kernels_hidden")
PDF = ("kde_pdf_visible", "kde_pdf_hidden")
RULES = ("bandwidth_rules_visible", "bandwidth_rules_hidden")
LOO = ("loo_log_likelihood_visible", "loo_log_likelihood_hidden")
SELECT = ("select_bandwidth_visible", "select_bandwidth_hidden")
NB = ("kde_naive_bayes_visible", "kde_naive_bayes_hidden")

MUTANTS = [
    # Question 1: kernels
    Mutant("box kernel of height 1 instead of 1/2", "kernels",
           "np.where(np.abs(u) <= 1, 0.5, 0.0)", "np.where(np.abs(u) <= 1, 1.0, 0.0)", KERNELS),
    Mutant("box kernel supported on |u| <= 2", "kernels",
           "np.where(np.abs(u) <= 1, 0.5, 0.0)", "np.where(np.abs(u) <= 2, 0.5, 0.0)", KERNELS),
    Mutant("Epanechnikov kernel without the factor 3/4", "kernels",
           "return 0.75 * (1.0 - u ** 2) * (np.abs(u) < 1)", "return (1.0 - u ** 2) * (np.abs(u) < 1)",
           KERNELS),
    Mutant("Epanechnikov kernel cut only at u < 1 (not symmetric, negative for u < -1)", "kernels",
           "(np.abs(u) < 1)", "(u < 1)", KERNELS),
    # Question 2: the estimate
    Mutant("missing the factor 1/h", "kde_pdf",
           "/ (data.size * h)", "/ data.size", PDF),
    Mutant("divides by N - 1 instead of N", "kde_pdf",
           "/ (data.size * h)", "/ ((data.size - 1) * h)", PDF),
    Mutant("divides by h squared", "kde_pdf",
           "/ (data.size * h)", "/ (data.size * h ** 2)", PDF),
    Mutant("differences not scaled by h", "kde_pdf",
           "u = (x_query[:, None] - data[None, :]) / h", "u = x_query[:, None] - data[None, :]", PDF),
    # Question 3: rules of thumb
    Mutant("Scott with the standard deviation of divisor N", "bandwidth_rules",
           "np.std(x, ddof=1) * x.size", "np.std(x) * x.size", RULES),
    Mutant("Scott with exponent -1/4", "bandwidth_rules",
           "x.size ** (-1 / 5)", "x.size ** (-1 / 4)", RULES),
    Mutant("Silverman with (4N/3) instead of (3N/4)", "bandwidth_rules",
           "(0.75 * x.size) ** (-1 / 5)", "(4 / 3 * x.size) ** (-1 / 5)", RULES),
    Mutant("Silverman with the standard deviation of divisor N", "bandwidth_rules",
           "sigma = np.std(x, ddof=1)", "sigma = np.std(x)", RULES),
    # Question 4: leave-one-out log-likelihood
    Mutant("does not leave the point out", "loo_log_likelihood",
           "np.fill_diagonal(log_k, -np.inf)", "pass", LOO),
    Mutant("normalises by N instead of N - 1", "loo_log_likelihood",
           "np.log((N - 1) * h)", "np.log(N * h)", LOO),
    Mutant("log of the sum of exponentials, which underflows", "loo_log_likelihood",
           "logsumexp(log_k, axis=1)", "np.log(np.sum(np.exp(log_k), axis=1))", LOO),
    Mutant("forgets the 1/h of the scaled kernel", "loo_log_likelihood",
           "np.log((N - 1) * h)", "np.log(N - 1)", LOO),
    # Question 5: bandwidth selection
    Mutant("argmin instead of argmax", "select_bandwidth",
           "best = candidates[np.argmax(scores)]", "best = candidates[np.argmin(scores)]", SELECT),
    Mutant("chooses by the training log-likelihood", "select_bandwidth",
           "loo_log_likelihood(data, h) for h in candidates",
           "np.sum(np.log(kde_pdf(data, data, h))) for h in candidates", SELECT),
    Mutant("returns the index of the best candidate", "select_bandwidth",
           "best = candidates[np.argmax(scores)]", "best = np.argmax(scores)", SELECT),
    # Question 6: KDE naive Bayes
    Mutant("forgets the prior", "kde_naive_bayes",
           "joint[:, c] = np.log(Xc.shape[0] / N) + log_f.sum(axis=1)",
           "joint[:, c] = log_f.sum(axis=1)", NB),
    Mutant("does not normalise the posterior", "kde_naive_bayes",
           "return joint - logsumexp(joint, axis=1, keepdims=True)", "return joint", NB),
    Mutant("product of densities, which underflows", "kde_naive_bayes",
           "log_f.sum(axis=1)", "np.log(np.prod(np.exp(log_f), axis=1))", NB),
    Mutant("class densities divided by N instead of N_c", "kde_naive_bayes",
           "np.log(Xc.shape[0] * h)", "np.log(N * h)", NB),
    Mutant("log of the density computed naively (underflows far from the data)", "kde_naive_bayes",
           "logsumexp(log_k, axis=1)", "np.log(np.sum(np.exp(log_k), axis=1))", NB),
]

# Rules the questions state in words, each caught by the visible test below the answer.
MUTANTS += [
    Mutant("an unknown kernel raises KeyError, not ValueError", "kde_pdf",
           "raise ValueError(", "raise KeyError(", ("kde_pdf_visible",)),
    Mutant("assumes the labels are 0, ..., C-1", "kde_naive_bayes",
           "classes = np.unique(y_train)", "classes = np.arange(y_train.max() + 1)",
           ("kde_naive_bayes_visible",)),
]
