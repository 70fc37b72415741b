from tests.mutants import Mutant, visible_alone, named

_BERN = ("bernoulli_log_likelihood_visible", "bernoulli_log_likelihood_hidden")
_GAUSS = ("gaussian_mle_visible", "gaussian_mle_hidden")
_CAT = ("categorical_mle_visible", "categorical_mle_hidden")
_GLL = ("gamma_log_likelihood_visible", "gamma_log_likelihood_hidden")
_SCORE = ("gamma_score_visible", "gamma_score_hidden")
_GMLE = ("gamma_mle_visible", "gamma_mle_hidden")

_LL = "ll = xlogy(n_heads, theta) + xlog1py(n_tails, -theta)"
_GAMMA_LL = ("ll = n * (shape * np.log(rate) - gammaln(shape)) + (shape - 1) * np.sum(np.log(x)) "
             "- rate * np.sum(x)")

MUTANTS = [
    # Question 1
    Mutant("plain log: 0 * log 0 gives nan", "bernoulli_log_likelihood", _LL,
           "ll = n_heads * np.log(theta) + n_tails * np.log(1 - theta)", _BERN),
    Mutant("log of the product (underflows for many flips)", "bernoulli_log_likelihood", _LL,
           "ll = np.log(theta ** n_heads * (1 - theta) ** n_tails)", _BERN),
    Mutant("average instead of sum", "bernoulli_log_likelihood", _LL,
           f"{_LL}; ll = ll / x.size", _BERN),
    Mutant("heads and tails swapped", "bernoulli_log_likelihood", _LL,
           "ll = xlogy(n_tails, theta) + xlog1py(n_heads, -theta)", _BERN),
    Mutant("tails counted as all flips", "bernoulli_log_likelihood",
           "n_tails = x.size - n_heads", "n_tails = x.size", _BERN),
    # Question 2
    Mutant("unbiased 1/(N-1) variance", "gaussian_mle",
           "/ x.size)", "/ (x.size - 1))", _GAUSS),
    Mutant("returns the variance, not the standard deviation", "gaussian_mle",
           "sigma = np.sqrt(np.sum((x - mu) ** 2) / x.size)",
           "sigma = np.sum((x - mu) ** 2) / x.size", _GAUSS),
    Mutant("forgets to centre before squaring", "gaussian_mle",
           "(x - mu) ** 2", "x ** 2", _GAUSS),
    Mutant("median instead of mean", "gaussian_mle",
           "mu = x.mean()", "mu = np.median(x)", _GAUSS),
    # Question 3
    Mutant("bincount without minlength (unseen last categories dropped)", "categorical_mle",
           "np.bincount(x, minlength=n_categories)", "np.bincount(x)", _CAT),
    Mutant("counts not normalised", "categorical_mle",
           "return counts / x.size", "return counts", _CAT),
    Mutant("divides by N + 1", "categorical_mle",
           "return counts / x.size", "return counts / (x.size + 1)", _CAT),
    Mutant("divides by K instead of N", "categorical_mle",
           "return counts / x.size", "return counts / n_categories", _CAT),
    # Question 4
    Mutant("scale instead of rate", "gamma_log_likelihood", _GAMMA_LL,
           "ll = n * (-shape * np.log(rate) - gammaln(shape)) + (shape - 1) * np.sum(np.log(x)) "
           "- np.sum(x) / rate", _GLL),
    Mutant("missing log Gamma(a)", "gamma_log_likelihood",
           " - gammaln(shape))", ")", _GLL),
    Mutant("power a instead of a - 1", "gamma_log_likelihood",
           "(shape - 1) * np.sum", "shape * np.sum", _GLL),
    Mutant("log of Gamma(a) (overflows for large a)", "gamma_log_likelihood",
           "gammaln(shape)", "np.log(__import__('scipy.special').special.gamma(shape))", _GLL),
    Mutant("log Gamma(a) not multiplied by N", "gamma_log_likelihood",
           "n * (shape * np.log(rate) - gammaln(shape))",
           "n * shape * np.log(rate) - gammaln(shape)", _GLL),
    # Question 5
    Mutant("d/da log Gamma(a) taken as log a", "gamma_score",
           "digamma(shape)", "np.log(shape)", _SCORE),
    Mutant("d/da log Gamma(a) taken as log Gamma(a)", "gamma_score",
           "digamma(shape)", "gammaln(shape)", _SCORE),
    Mutant("missing factor N in d/da", "gamma_score",
           "n * (np.log(rate) - digamma(shape))", "(np.log(rate) - digamma(shape))", _SCORE),
    Mutant("sign error in d/db", "gamma_score",
           "n * shape / rate - np.sum(x)", "n * shape / rate + np.sum(x)", _SCORE),
    Mutant("rate and shape swapped in d/db", "gamma_score",
           "n * shape / rate", "n * rate / shape", _SCORE),
    # Question 6
    Mutant("wrong sign in the Newton step", "gamma_mle",
           "a = a - step", "a = a + step", _GMLE),
    Mutant("rate = mean / shape", "gamma_mle",
           "float(a / xbar)", "float(xbar / a)", _GMLE),
    Mutant("missing 1/a in the derivative", "gamma_mle",
           "fprime = 1.0 / a - polygamma(1, a)", "fprime = -polygamma(1, a)", _GMLE),
    Mutant("digamma instead of trigamma in the derivative", "gamma_mle",
           "polygamma(1, a)", "polygamma(0, a)", _GMLE),
    Mutant("s with the wrong sign", "gamma_mle",
           "s = np.log(xbar) - np.mean(np.log(x))", "s = np.mean(np.log(x)) - np.log(xbar)", _GMLE),
    Mutant("a single Newton step", "gamma_mle",
           "if abs(step) <= tol * a:", "if True:", _GMLE),
]

# Rules the questions state in words, each caught by the visible test below the answer.
MUTANTS += [visible_alone(m) for m in named(
    MUTANTS, "plain log: 0 * log 0 gives nan", "log of the product (underflows for many flips)",
    "bincount without minlength (unseen last categories dropped)")]
MUTANTS += [
    Mutant("ignores max_iter (runs until converged)", "gamma_mle",
           "for _ in range(max_iter):", "for _ in range(1000):", ("gamma_mle_visible",)),
    Mutant("starts from a = 1 instead of 1/(2s)", "gamma_mle",
           "a = 0.5 / s", "a = 1.0", ("gamma_mle_visible",)),
]
