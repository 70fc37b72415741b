from tests.mutants import Mutant, visible_alone, named

SOFTMAX = ("softmax_visible", "softmax_hidden")
GNB = ("fit_gaussian_nb_visible", "fit_gaussian_nb_hidden")
POST = ("gaussian_nb_log_posterior_visible", "gaussian_nb_log_posterior_hidden")
SVW = ("shared_variance_weights_visible", "shared_variance_weights_hidden")
CE = ("cross_entropy_and_gradient_visible", "cross_entropy_and_gradient_hidden")
FIT = ("fit_logistic_regression_visible", "fit_logistic_regression_hidden")

MUTANTS = [
    # softmax
    Mutant("no shift by the row maximum (overflow gives nan)", "softmax",
           "T = Z - Z.max(axis=1, keepdims=True)", "T = Z", SOFTMAX),
    Mutant("shift by the overall maximum instead of each row's", "softmax",
           "T = Z - Z.max(axis=1, keepdims=True)", "T = Z - Z.max()", SOFTMAX),
    Mutant("normalises over axis 0 (columns)", "softmax",
           "return E / E.sum(axis=1, keepdims=True)", "return E / E.sum(axis=0, keepdims=True)",
           SOFTMAX),
    Mutant("exponentials without normalising", "softmax",
           "return E / E.sum(axis=1, keepdims=True)", "return E", SOFTMAX),
    # Gaussian naive Bayes estimates
    Mutant("unbiased variances 1/(N_c - 1)", "fit_gaussian_nb",
           "variances = onehot.T @ residuals ** 2 / counts[:, None]",
           "variances = onehot.T @ residuals ** 2 / (counts[:, None] - 1)", GNB),
    Mutant("one variance per feature pooled over the classes", "fit_gaussian_nb",
           "variances = onehot.T @ residuals ** 2 / counts[:, None]",
           "variances = np.tile(np.mean(residuals ** 2, axis=0), (n_classes, 1))", GNB),
    Mutant("prior not logged", "fit_gaussian_nb",
           "log_prior = np.log(counts / X.shape[0])", "log_prior = counts / X.shape[0]", GNB),
    Mutant("variances around the overall mean, not the class mean", "fit_gaussian_nb",
           "residuals = X - means[y]", "residuals = X - X.mean(axis=0)", GNB),
    Mutant("standard deviations instead of variances", "fit_gaussian_nb",
           "return means, variances, log_prior", "return means, np.sqrt(variances), log_prior", GNB),
    # log posterior
    Mutant("forgets the prior", "gaussian_nb_log_posterior",
           "jll = (log_prior", "jll = (0.0", POST),
    Mutant("returns the joint log-likelihood, not normalised", "gaussian_nb_log_posterior",
           "return jll - top - np.log(np.sum(np.exp(jll - top), axis=1, keepdims=True))",
           "return jll", POST),
    Mutant("drops the Gaussian's normalising constant log(2 pi sigma^2)", "gaussian_nb_log_posterior",
           "- 0.5 * np.sum(np.log(2 * np.pi * variances), axis=1)", "- 0.0", POST),
    Mutant("divides by the standard deviation instead of the variance", "gaussian_nb_log_posterior",
           "diff ** 2 / (2 * variances)", "diff ** 2 / (2 * np.sqrt(variances))", POST),
    Mutant("normalises the probabilities outside log space (0/0 far away)",
           "gaussian_nb_log_posterior",
           "return jll - top - np.log(np.sum(np.exp(jll - top), axis=1, keepdims=True))",
           "return np.log(np.exp(jll) / np.sum(np.exp(jll), axis=1, keepdims=True))", POST),
    # shared-variance weights
    Mutant("sign error in the mu^2 term", "shared_variance_weights",
           "w0 = np.log(counts) - np.sum", "w0 = np.log(counts) + np.sum", SVW),
    Mutant("missing factor 2 in the mu^2 term", "shared_variance_weights",
           "/ (2 * sigma2)", "/ sigma2", SVW),
    Mutant("sigma instead of sigma^2", "shared_variance_weights",
           "sigma2 = np.mean((X - means[y]) ** 2)", "sigma2 = np.sqrt(np.mean((X - means[y]) ** 2))",
           SVW),
    Mutant("forgets ln N_c in the intercept", "shared_variance_weights",
           "w0 = np.log(counts) - np.sum", "w0 = - np.sum", SVW),
    Mutant("total variance instead of the within-class variance", "shared_variance_weights",
           "(X - means[y])", "(X - X.mean(axis=0))", SVW),
    # cross-entropy and gradient
    Mutant("gradient sign Y - P", "cross_entropy_and_gradient",
           "G = P - Y", "G = Y - P", CE),
    Mutant("no penalty term in the gradient", "cross_entropy_and_gradient",
           "grad_W = G.T @ X + reg * W", "grad_W = G.T @ X", CE),
    Mutant("gradient averaged while the loss is summed", "cross_entropy_and_gradient",
           "grad_W = G.T @ X + reg * W", "grad_W = G.T @ X / X.shape[0] + reg * W", CE),
    Mutant("transposed gradient X^T (P - Y)", "cross_entropy_and_gradient",
           "grad_W = G.T @ X + reg * W", "grad_W = X.T @ G + reg * W.T", CE),
    Mutant("loss averaged over the examples", "cross_entropy_and_gradient",
           "loss = np.sum(lse) - np.sum(Y * Z)", "loss = np.mean(lse) - np.sum(Y * Z) / len(Y)", CE),
    Mutant("penalises the intercepts in the gradient", "cross_entropy_and_gradient",
           "grad_b = G.sum(axis=0)", "grad_b = G.sum(axis=0) + reg * b", CE),
    Mutant("log-sum-exp without the shift (overflow)", "cross_entropy_and_gradient",
           "lse = top[:, 0] + np.log(np.sum(np.exp(Z - top), axis=1))",
           "lse = np.log(np.sum(np.exp(Z), axis=1))", CE),
    # gradient descent
    Mutant("gradient ascent on W", "fit_logistic_regression",
           "W = W - lr * grad_W / n", "W = W + lr * grad_W / n", FIT),
    Mutant("intercepts never updated", "fit_logistic_regression",
           "b = b - lr * grad_b / n", "b = b", FIT),
    Mutant("penalty with the wrong sign", "fit_logistic_regression",
           "cross_entropy_and_gradient(W, b, X, Y, reg)", "cross_entropy_and_gradient(W, b, X, Y, -reg)",
           FIT),
    Mutant("steps on the summed loss (no division by N)", "fit_logistic_regression",
           "W = W - lr * grad_W / n\n        b = b - lr * grad_b / n",
           "W = W - lr * grad_W\n        b = b - lr * grad_b", FIT),
    Mutant("too few steps (stops after n_iter // 10)", "fit_logistic_regression",
           "for _ in range(n_iter):", "for _ in range(n_iter // 10):", FIT),
]

# Rules the questions state in words, each caught by the visible test below the answer.
MUTANTS += [visible_alone(m) for m in named(
    MUTANTS, "unbiased variances 1/(N_c - 1)", "steps on the summed loss (no division by N)")]
MUTANTS += [
    Mutant("penalises the intercepts, in the loss and the gradient alike",
           "cross_entropy_and_gradient", "grad_b = G.sum(axis=0)",
           "grad_b = G.sum(axis=0) + reg * b\n    loss = loss + 0.5 * reg * np.sum(b ** 2)",
           ("cross_entropy_and_gradient_visible",)),
    Mutant("log of the softmax (underflows for logits in the thousands)",
           "cross_entropy_and_gradient", "loss = np.sum(lse) - np.sum(Y * Z)",
           "loss = -np.sum(Y * np.log(np.exp(Z - lse[:, None])))",
           ("cross_entropy_and_gradient_visible",)),
]
