"""Declared checks: what a test cell compares, stated next to the question in the source notebook.

Most autograded cells compare what a student's function returned on seeded inputs with what the
reference returns on the same inputs. Instead of a hand-written check (a function in
``<course>/checks/<problem set>.py``) and a generator (in ``coursedata/inputs``) tied to the
test cell by matching strings, the author writes one small declaration in the metadata of the test
cell, ``metadata.course.check``, which this module turns into a check ``check(answers) ->
Outcome`` (the contract of :mod:`autograder.checks`). Example, the visible and the hidden cell of
a question::

    "course": {"check": {                        # gaussian_mle_visible
      "reference": "solutions.mle:gaussian_mle",
      "outputs": ["μ̂", "σ̂ (divisor N)"],
      "rtol": 1e-8, "atol": 1e-10,
      "cases": {"gaussian": {"x": {"normal": {"seed": 4, "n": 30, "mean": 10, "sd": 3}}}}
    }}

    "course": {"check": {                        # gaussian_mle_hidden
      "cases": {"gaussian_small": {"x": {"normal": {"seed": 5, "n": 4, "mean": -2, "sd": 1.5}}},
                "gaussian_large": {"x": {"normal": {"seed": 6, "n": 3000, "mean": 250, "sd": 0.4}}}},
      "weights": {"gaussian": 1, "gaussian_small": 1, "gaussian_large": 1}
    }}

and the cell's hidden part records each of its cases, as before::

    record("gaussian_small", gaussian_mle, **inputs("ps3_mle", "gaussian_small"))

Keys of a declaration
---------------------
``cases``
    The cases this cell records, each ``{argument: input}``: the keyword arguments of the
    student's function. An input is a literal (a number, or a list, given as an array) or one
    generator ``{name: parameters}`` of :data:`GENERATORS` (``normal``, ``gamma``, ``poisson``,
    ``bernoulli``, ``categorical``, ``linspace``, ``full``, ``dataset``, ``dirichlet``), or a
    function of a trusted module named ``"package.module:function"`` (under ``coursedata``,
    ``solutions`` or the course's own ``course``, as ``course.checks.NAME``) called with the
    parameters. Seeds are explicit
    parameters. Arguments drawn from one random stream (the ``R`` and ``mask`` of one rating
    matrix, the ``X`` and ``y`` of one training set) share one key naming them in order,
    separated by commas, ``"R, mask": {"course.checks.ps2_matrix_completion:ratings":
    {...}}``: the function returns a tuple (or list) of exactly that many values, one per
    argument, so that their parameters cannot drift apart. Everything else sees the single
    arguments (:attr:`Case.arguments`, :func:`case_inputs`). The grader
    writes these inputs into the submission's scratch folder before the notebook runs
    (:func:`write_inputs`), where the hidden part's ``inputs(...)`` reads them: the kit carries no
    generator (a seed change leaves the kit as it is), and the kernel and the grader see the
    same arrays. A case may override the cell's ``reference``, ``outputs`` and comparison keys
    (a question with two functions): ``{"args": {argument: input}, "reference": ..., ...}`` (so
    no argument can be called ``args``). A case keeps the settings of the cell that declares it,
    wherever it is scored.
``reference``
    ``"module:function"`` of a trusted module (normally ``solutions``): called with the same
    inputs, it gives the expected values. It may name a class (an estimator) when ``fitted``
    says how to use it.
``fitted``
    For a class as the reference: ``{"init": {parameter: value}, "fit": [argument, ...],
    "returns": [attribute or {method: [argument, ...]}, ...]}``. The class is built with
    ``init`` (default: its defaults), fitted on the arguments named by ``fit``, and the
    expected values are the fitted attributes (``"means_"``) and method calls
    (``{"predict_log_proba": ["X_test"]}``) of ``returns``, in the order of the outputs
    (:func:`reference_of`).
``outputs``
    One entry per value the function returns (a tuple when more than one), each a name for the
    student's message (``"σ̂"``) or ``{"name": ..., <comparison keys>}`` to compare that output
    differently, or ``{"name": ..., "weight": 4}`` to give it a share of its case's weight other
    than the others' (relative, default 1). Default: one output, ``"the return value"``.
``rtol``, ``atol``, ``compare``
    How an output is compared (keys of the declaration, or of one output). ``compare`` is
    ``"close"`` (the default: finite and within ``atol + rtol |expected|``), ``"log"`` (a
    log-probability: ``-inf`` must match, see :func:`~coursedata.compare.compare_extended`),
    ``"relative"`` (one number, relative error at most ``rtol``: iterative roots), ``"integer"``
    (integer-valued and equal), or an equivalence: ``"rows_up_to_sign"``,
    ``"columns_up_to_sign"``, ``"rows_up_to_constant"``, ``"permutation"`` (the same rows in any
    order), ``"log_probability_rows"`` (each row log-probabilities that sum to one, which explains
    a wrong answer first; then close), or ``"orthogonal_together"``, declared on several outputs
    of a case (matrices with as many columns, ALS's ``U`` and ``Z``): defined only up to one
    orthogonal ``Q`` applied to all of them at once, they are aligned by the ``Q`` that fits
    them best together (:func:`~coursedata.compare.orthogonal_together`), then each is compared
    close; one output's sign alone still counts. ``"scalar": true`` requires one number
    (shape ``()``).
``weights``
    Only in a ``_hidden`` cell: ``{case: weight}`` over its own cases and any recorded elsewhere
    in the notebook (the visible cell's), relative (normalised to sum to one). A case's weight is
    shared by its outputs in proportion to their ``weight`` (equally by default); each part earns
    its weight when right. A ``_visible`` cell has no weights: all or nothing over its own
    cases, as its visible test asserts values.

A ``_hidden`` cell takes ``reference``, ``outputs`` and the comparison keys it does not state
from its question's ``_visible`` cell (the same ``grade_id`` but for the suffix). A declaration
may also state only ``cases`` (inputs for a hand-written check, which reads them with
``answers.inputs(case)``): the cell's check is then ``CHECKS[grade_id]`` of the problem set's
Python module, which also wins over a declaration (a problem set can mix both).

Messages are generated from the declaration and the inputs (the output's name, each scalar
argument's value, each array's shape and a boolean one's number of True entries), so they
cannot go stale when an input changes. The declaration is read and evaluated only in the
grader's process; :func:`strip` removes it from a released notebook.
"""

from __future__ import annotations

import difflib
import importlib
import io
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path

import numpy as np

from autograder.checks.record_calls import parameter_orders
from autograder.course import CODE_PACKAGE, Course
from coursedata.compare import KINDS, Output
from coursedata.grading import INPUTS_FOLDER
from coursedata.naming import HIDDEN, VISIBLE, question_of, test_id, test_kind

__all__ = [
    "KEY",
    "GENERATORS",
    "COMPARISONS",
    "Output",
    "Input",
    "Case",
    "Declaration",
    "DeclarationError",
    "declarations",
    "declared_cases",
    "resolve",
    "reference_of",
    "generate",
    "generate_input",
    "generate_case",
    "case_inputs",
    "write_inputs",
    "input_files",
    "strip",
    "dataset_name",
    "is_checked",
    "INPUTS_FOLDER",
]


#: The key of ``metadata.course`` holding a test cell's declaration.
KEY = "check"
#: The keys of a cell's ``metadata.course`` that are the grader's alone, removed by :func:`strip`:
#: a test cell's declaration and a solution cell's mutants (:mod:`autograder.checks.mutants`).
GRADER_KEYS = (KEY, "mutants")
_TRUSTED = ("coursedata", "solutions", "course")


class DeclarationError(ValueError):
    """A declaration that cannot be read; the message says which cell and what to change."""


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _normal(seed: int, n: int, mean: float = 0.0, sd: float = 1.0) -> np.ndarray:
    return _rng(seed).normal(mean, sd, size=n)


def _gamma(seed: int, n: int, shape: float, rate: float) -> np.ndarray:
    return _rng(seed).gamma(shape, 1.0 / rate, size=n)


def _poisson(seed: int, n: int, lam: float) -> np.ndarray:
    return _rng(seed).poisson(lam, size=n).astype(np.int64)


def _bernoulli(seed: int, n: int, p: float) -> np.ndarray:
    """``n`` flips (1 heads, 0 tails), int64."""
    return (_rng(seed).random(n) < p).astype(np.int64)


def _categorical(seed: int, n: int, probs) -> np.ndarray:
    """``n`` labels ``0 .. K-1`` drawn with the probabilities ``probs`` (normalised; zeros
    allowed)."""
    probs = np.asarray(probs, dtype=float)
    return _rng(seed).choice(probs.size, size=n, p=probs / probs.sum())


def _linspace(start: float, stop: float, num: int, drop_ends: bool = False) -> np.ndarray:
    grid = np.linspace(start, stop, num)
    return grid[1:-1] if drop_ends else grid


def _full(n: int, value) -> np.ndarray:
    """``n`` copies of ``value`` (int64 for an integer)."""
    return np.full(n, value, dtype=np.int64 if isinstance(value, int) else float)


def _dirichlet(seed: int, n: int, alpha) -> np.ndarray:
    """``n`` rows of probabilities (shape ``(n, K)``, each row sums to one) drawn from a Dirichlet
    distribution with the concentrations ``alpha`` (``K`` of them): soft responsibilities."""
    return _rng(seed).dirichlet(np.asarray(alpha, dtype=float), size=n)


def _dataset(name: str, column: int | None = None) -> np.ndarray:
    """The features of ``coursedata.load_<name>()`` (one column of them when ``column`` is
    given)."""
    import coursedata

    loader = getattr(coursedata, f"load_{name}", None)
    if loader is None or not re.fullmatch(r"[a-z0-9_]+", name):
        raise DeclarationError(f"no data set {name!r} in coursedata (load_{name})")
    X = np.asarray(loader().X)
    return (X if column is None else X[:, column]).copy()


def dataset_name(name: str, column: int | None = None) -> str:
    """``the <name> data``, or ``the <name> data's <feature>`` for one column."""
    import coursedata

    if column is None:
        return f"the {name} data"
    names = getattr(getattr(coursedata, f"load_{name}")(), "feature_names", None)
    return f"the {name} data's {names[column] if names else f'column {column}'}"


#: The generators an input may name: ``{"normal": {"seed": 4, "n": 30, "mean": 10, "sd": 3}}``.
GENERATORS: dict[str, Callable[..., np.ndarray]] = {
    "normal": _normal,
    "gamma": _gamma,
    "poisson": _poisson,
    "bernoulli": _bernoulli,
    "categorical": _categorical,
    "linspace": _linspace,
    "full": _full,
    "dataset": _dataset,
    "dirichlet": _dirichlet,
}


def resolve(ref: str) -> Callable:
    """The function ``"package.module:function"`` of a trusted package."""
    module, _, name = ref.partition(":")
    if not (name and any(module == p or module.startswith(p + ".") for p in _TRUSTED)):
        raise DeclarationError(f"{ref!r} is not 'module:function' under one of {_TRUSTED}")
    if module.partition(".")[0] == CODE_PACKAGE and CODE_PACKAGE not in sys.modules:
        Course.default().use_code()  # no course chosen yet: the default course's code
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise DeclarationError(f"{ref!r} cannot be found: {exc}") from None


def _call(spec: Mapping):
    """What the generator ``{name: parameters}`` returns."""
    if len(spec) != 1:
        raise DeclarationError(f"an input is one {{generator: parameters}}; got {dict(spec)}")
    [(name, params)] = spec.items()
    if reads_parameter(spec):
        raise DeclarationError(
            f"{dict(spec)} reads a student's parameter ({{'variant': name}}), but this notebook "
            "was not made for one student (declare course.variants in its metadata; the grader "
            "replaces each parameter by the student's value)"
        )
    make = GENERATORS.get(name) or (resolve(name) if ":" in name else None)
    if make is None:
        raise DeclarationError(
            f"unknown generator {name!r}; known: {sorted(GENERATORS)} or 'module:function'"
        )
    try:
        return make(**dict(params or {}))
    except TypeError as exc:
        raise DeclarationError(f"generator {name!r}: {exc}") from None


def reads_parameter(spec) -> bool:
    """Whether ``spec`` holds a student's parameter ``{"variant": name}`` anywhere (the key of
    :data:`autograder.checks.personal.PARAMETER`), left unreplaced."""
    if isinstance(spec, Mapping):
        return set(spec) == {"variant"} or any(reads_parameter(v) for v in spec.values())
    return isinstance(spec, list) and any(reads_parameter(v) for v in spec)


def generate(spec):
    """One input from its declaration: a literal, ``{generator: parameters}``, or
    ``{"module:function": parameters}``. A list becomes an array; a number stays a number."""
    if isinstance(spec, Mapping):
        value = _call(spec)
        if isinstance(value, tuple):  # np.asarray would stack the arguments into one array
            raise DeclarationError(
                f"its generator returns {len(value)} values; declare them "
                "under one key naming one argument per value, in order "
                '("R, mask")'
            )
        return np.asarray(value)
    if isinstance(spec, list):
        return np.asarray(spec)
    if isinstance(spec, (bool, int, float, str)) or spec is None:
        return spec
    raise DeclarationError(f"an input must be a number, a list or a generator; got {spec!r}")


# --------------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------------


#: Comparison kinds an output may declare (:data:`coursedata.compare.KINDS`).
COMPARISONS = tuple(KINDS)
_COMPARE_KEYS = {"compare", "rtol", "atol", "scalar"}
_KEYS = {"reference", "fitted", "outputs", "cases", "weights"} | _COMPARE_KEYS


@dataclass(frozen=True)
class Input:
    """One declared input of a case: the argument it gives, or the arguments one generator
    draws together from one random stream (its key ``"R, mask"``).

    Attributes
    ----------
    names : tuple of str
        The arguments, in the order the generator returns their values (one for most inputs).
    spec : object
        A literal or ``{generator: parameters}`` (see :func:`generate`); for several names, a
        generator returning a tuple (or list) of ``len(names)`` values.
    """

    names: tuple[str, ...]
    spec: object

    @property
    def key(self) -> str:
        """The key it is declared under: its names separated by ``", "``."""
        return ", ".join(self.names)


@dataclass(frozen=True)
class Case:
    """One declared case: the student's function's inputs and how its answer is compared.

    Attributes
    ----------
    name : str
    inputs : tuple of Input
        The declared inputs, in order; each gives one argument or several (see :class:`Input`).
    reference : str or None
        ``"module:function"``; ``None`` for inputs only (a Python check scores the case).
    outputs : tuple of Output
    cell : str
        The ``grade_id`` of the cell that declares it (named in errors).
    fitted : dict or None
        For a class as the reference, how to fit it and read the expected values.
    """

    name: str
    inputs: tuple[Input, ...]
    reference: str | None = None
    outputs: tuple[Output, ...] = ()
    cell: str = ""
    fitted: dict | None = None

    @property
    def arguments(self) -> list[str]:
        """The keyword arguments of the student's function, one name each, in order."""
        return [name for i in self.inputs for name in i.names]

    @property
    def sources(self) -> dict:
        """``{argument: spec of the input giving it}`` (a shared generator for drawn-together
        arguments)."""
        return {name: i.spec for i in self.inputs for name in i.names}


@dataclass(frozen=True)
class Declaration:
    """One test cell's declaration.

    Attributes
    ----------
    grade_id : str
    cases : dict
        ``{case: Case}`` recorded by this cell.
    weights : dict or None
        ``{case: weight}`` normalised to sum to one (hidden cells); ``None`` for a visible cell
        (all or nothing over its own cases).
    """

    grade_id: str
    cases: dict = field(default_factory=dict)
    weights: dict | None = None

    @property
    def scored(self) -> list[str]:
        """The cases this cell's check reads."""
        return list(self.weights) if self.weights is not None else list(self.cases)

    @property
    def references(self) -> list[str]:
        """The references of its own cases, each once."""
        return list(dict.fromkeys(c.reference for c in self.cases.values() if c.reference))


def _raw(cell) -> dict | None:
    meta = cell.get("metadata", {}).get("course", {})
    value = meta.get(KEY) if isinstance(meta, Mapping) else None
    return None if value is None else dict(value)


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, Mapping) else None


def _output(entry, defaults: dict, where: str) -> Output:
    spec = {"name": entry} if isinstance(entry, str) else dict(entry)
    unknown = set(spec) - _COMPARE_KEYS - {"name", "weight"}
    weight = spec.get("weight", 1)
    if (
        unknown
        or "name" not in spec
        or not (isinstance(weight, (int, float)) and 0 < weight < float("inf"))
    ):
        raise DeclarationError(
            f"{where}: an output is a name or {{'name': ..., "
            f"{', '.join(sorted(_COMPARE_KEYS))}, weight > 0}}; got {entry!r}"
        )
    merged = {k: v for k, v in defaults.items() if k in _COMPARE_KEYS} | spec
    if merged.get("compare", "close") not in COMPARISONS:
        near = difflib.get_close_matches(str(merged["compare"]), COMPARISONS, n=1)
        raise DeclarationError(
            f"{where}: unknown comparison {merged['compare']!r} (known: "
            f"{', '.join(COMPARISONS)}{f'; did you mean {near[0]!r}?' if near else ''})"
        )
    for key in ("rtol", "atol"):
        value = merged.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise DeclarationError(f"{where}: its {key} is {value!r}, not a number of 0 or more")
    return Output(**merged)


def _names(key, taken: set, where: str) -> tuple[str, ...]:
    """The argument names of an input's key, ``"x"`` or ``"R, mask"``; ``taken`` the case's
    other names so far."""
    names = tuple(n.strip() for n in str(key).split(","))
    several = len(names) > 1
    if not all(n.isidentifier() for n in names):
        raise DeclarationError(
            f"{where}: argument key {key!r} must be "
            + ("argument names separated by commas, none empty" if several else "an argument name")
            + " (keywords of the function)"
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise DeclarationError(
            f"{where}: argument key {key!r} names {repeated} twice; name each argument once"
        )
    if several and "args" in names:
        raise DeclarationError(
            f"{where}: argument key {key!r} names 'args', the key of a case's "
            "own settings; no argument can be called 'args'"
        )
    clash = [n for n in names if n in taken]
    if clash:
        raise DeclarationError(
            f"{where}: argument key {key!r} names {clash}, which another key "
            "of the case gives too; give each argument once"
        )
    return names


def _inputs(args: Mapping, where: str) -> tuple[Input, ...]:
    """The inputs of a case from ``{key: input}``, a key naming one argument or several drawn
    together by one generator."""
    out, taken = [], set[str]()
    for key, spec in args.items():
        names = _names(key, taken, where)
        if len(names) > 1 and not isinstance(spec, Mapping):
            raise DeclarationError(
                f"{where}: argument key {key!r} names {len(names)} arguments, "
                f"so its input is one generator returning {len(names)} "
                f"values; got {spec!r}"
            )
        taken.update(names)
        out.append(Input(names, spec))
    return tuple(out)


def _case(name: str, spec, defaults: dict, where: str) -> Case:
    """A case from its declaration: ``{argument: input}``, or ``{"args": {...}, <keys>}`` to
    state its own reference, outputs or comparison over the cell's."""
    if not isinstance(spec, Mapping):
        raise DeclarationError(f"{where}: case {name!r} must map arguments to inputs")
    if "args" in spec:
        unknown = set(spec) - {"args", "reference", "fitted", "outputs"} - _COMPARE_KEYS
        if unknown:
            raise DeclarationError(f"{where}: case {name!r} has unknown keys {sorted(unknown)}")
        settings = defaults | {k: v for k, v in spec.items() if k != "args"}
        args = dict(spec["args"])
    else:
        settings, args = defaults, dict(spec)
    reference = settings.get("reference")
    outputs = settings.get("outputs", ["the return value"])
    outputs = [outputs] if isinstance(outputs, (str, Mapping)) else outputs
    return Case(
        name,
        _inputs(args, f"{where}, case {name!r}"),
        reference,
        tuple(_output(o, settings, f"{where}, case {name!r}") for o in outputs)
        if reference
        else (),
        where,
        _fitted(settings.get("fitted"), f"{where}, case {name!r}"),
    )


def _fitted(spec, where: str) -> dict | None:
    """A ``fitted`` declaration, checked: ``{"fit": [names], "returns": [attribute or
    {method: [names]}]}``."""
    if spec is None:
        return None
    returns = spec.get("returns") if isinstance(spec, Mapping) else None
    fit = spec.get("fit", []) if isinstance(spec, Mapping) else None
    ok = (
        isinstance(returns, list)
        and returns
        and isinstance(fit, list)
        and all(isinstance(a, str) for a in fit)
        and all(
            isinstance(r, str)
            or (
                isinstance(r, Mapping)
                and len(r) == 1
                and all(isinstance(a, list) for a in r.values())
            )
            for r in returns
        )
        and isinstance(spec.get("init", {}), Mapping)
        and not set(spec) - {"init", "fit", "returns"}
    )
    if not ok:
        raise DeclarationError(
            f'{where}: fitted must be {{"init": {{parameter: value}}, "fit": [argument, ...], '
            f'"returns": [attribute or {{method: [argument, ...]}}, ...]}}; got {spec!r}'
        )
    return dict(spec)


def reference_of(case: Case) -> Callable:
    """The reference of ``case`` as a function of its inputs (keyword arguments): the function
    it names, or for a class with ``fitted``, the class built, fitted and read as declared."""
    target = resolve(case.reference or "")
    if case.fitted is None:
        return target
    return partial(_fit_and_read, target, case.fitted)


def _fit_and_read(cls, fitted: Mapping, **inputs):
    model = cls(**fitted.get("init", {}))
    model.fit(*(inputs[a] for a in fitted["fit"]))
    values = []
    for r in fitted["returns"]:
        if isinstance(r, str):
            values.append(getattr(model, r))
        else:
            [(method, args)] = r.items()
            values.append(getattr(model, method)(*(inputs[a] for a in args)))
    return values[0] if len(values) == 1 else tuple(values)


def declarations(notebook) -> dict[str, Declaration]:
    """Every declared test cell of a source notebook, ``{grade_id: Declaration}``.

    Raises
    ------
    DeclarationError
        A declaration with unknown keys, a case declared twice, weights in a visible cell or
        on an undeclared case, an unknown comparison: the message names the cell.
    """
    raw: dict[str, dict] = {}
    for cell in notebook.get("cells", []):
        found = _raw(cell)
        if found is None:
            continue
        gid = _grade_id(cell)
        if not gid:
            raise DeclarationError(f"a cell without a grade_id declares a check: {found}")
        unknown = set(found) - _KEYS
        if unknown:
            raise DeclarationError(
                f"{gid}: unknown keys {sorted(unknown)} in course.check; known: {sorted(_KEYS)}"
            )
        raw[gid] = found
    out: dict[str, Declaration] = {}
    owner: dict[str, Case] = {}
    for gid, spec in raw.items():
        visible = (
            raw.get(test_id(question_of(gid), VISIBLE), {}) if test_kind(gid) == HIDDEN else {}
        )
        defaults = {k: v for k, v in (visible | spec).items() if k not in ("cases", "weights")}
        cases = {}
        for name, case_spec in dict(spec.get("cases", {})).items():
            if name in owner:
                raise DeclarationError(f"{gid}: case {name!r} is declared twice")
            cases[name] = owner[name] = _case(name, case_spec, defaults, gid)
        weights = spec.get("weights")
        if weights is not None:
            if test_kind(gid) != HIDDEN:
                raise DeclarationError(
                    f"{gid}: only a _hidden cell has weights (a visible cell is all or nothing)"
                )
            total = float(sum(weights.values()))
            if not weights or total <= 0 or any(w < 0 for w in weights.values()):
                raise DeclarationError(f"{gid}: weights must be non-negative and not all zero")
            weights = {c: w / total for c, w in weights.items()}
        out[gid] = Declaration(gid, cases, weights)
    for gid, d in out.items():
        missing = [c for c in d.scored if c not in owner]
        if missing:
            raise DeclarationError(f"{gid}: weights name undeclared cases {missing}")
        scored = [owner[c] for c in d.scored]
        if any(c.reference for c in scored) and not all(c.reference for c in scored):
            raise DeclarationError(
                f"{gid}: cases {[c.name for c in scored if not c.reference]}"
                " have no reference to be compared with"
            )
    return out


def is_checked(d: Declaration, owner: Mapping[str, Case]) -> bool:
    """Whether a declaration is a check (its scored cases have references), not inputs only."""
    return bool(d.scored) and all(owner[c].reference for c in d.scored)


def declared_cases(notebook) -> dict[str, Case]:
    """``{case: Case}`` over every declaration of ``notebook``."""
    return {c: case for d in declarations(notebook).values() for c, case in d.cases.items()}


def generate_input(given: Input, where: str = "") -> dict:
    """``{argument: value}`` of one declared input: :func:`generate` of its spec for one
    argument; for several, the values the generator returns, one per name in order.

    Raises
    ------
    DeclarationError
        The generator of several arguments returns something other than a tuple or list of
        exactly ``len(given.names)`` values, or that of one argument a tuple; an input that
        cannot be made (the message names ``where``, when given, and the key).
    """
    prefix = f"{where}: argument key {given.key!r}" if where else f"argument key {given.key!r}"
    if len(given.names) == 1:
        try:
            return {given.names[0]: generate(given.spec)}
        except DeclarationError as exc:
            if not where:  # the caller names the cell, the case and the key
                raise
            raise DeclarationError(f"{prefix}: {exc}") from None
    if not isinstance(given.spec, Mapping):
        raise DeclarationError(
            f"{prefix} names {len(given.names)} arguments, so its input is "
            f"one {{generator: parameters}}; got {given.spec!r}"
        )
    values = _call(given.spec)
    if not isinstance(values, (tuple, list)) or len(values) != len(given.names):
        got = (
            f"{len(values)} values"
            if isinstance(values, (tuple, list))
            else f"one {type(values).__name__}, not a tuple"
        )
        raise DeclarationError(
            f"{prefix} names {len(given.names)} arguments, but its generator "
            f"returns {got}; name one argument per value it returns, in order"
        )
    return {name: np.asarray(v) for name, v in zip(given.names, values)}


def generate_case(case: Case) -> dict:
    """Fresh inputs of ``case``, ``{argument: value}`` in declared order (the keyword arguments
    of the student's function)."""
    where = f"{case.cell}, case {case.name!r}" if case.cell else f"case {case.name!r}"
    return {
        arg: value for given in case.inputs for arg, value in generate_input(given, where).items()
    }


def case_inputs(cases: Mapping[str, Case], case: str) -> dict:
    """Fresh inputs of a declared case (keyword arguments of the student's function)."""
    try:
        found = cases[case]
    except KeyError:
        raise ValueError(f"no declared case {case!r}; declared: {sorted(cases)}") from None
    return generate_case(found)


def input_files(notebook) -> dict[str, bytes]:
    """``{case: the bytes of its inputs' .npz}`` for every declared case of ``notebook``: arrays
    by argument name, in the order of the recorded function's parameters (``record`` passes them
    by position), numbers as 0-d arrays (read back as numbers by
    :func:`coursedata.grading.inputs`). Generated once per process for given declarations."""
    cases = declared_cases(notebook)
    if not cases:
        return {}
    orders = parameter_orders(notebook)
    return _input_files(
        json.dumps(
            {
                c: [case.cell, [[list(i.names), i.spec] for i in case.inputs], orders.get(c, [])]
                for c, case in cases.items()
            },
            sort_keys=True,
        )
    )


def write_inputs(notebook, results_dir) -> list[str]:
    """Write every declared case's inputs (:func:`input_files`) to
    ``results_dir/inputs/<case>.npz``; return the cases written. Called by the grader before a
    notebook runs."""
    files = input_files(notebook)
    if not files:
        return []
    folder = Path(results_dir) / INPUTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for case, data in files.items():
        (folder / f"{case}.npz").write_bytes(data)
    return sorted(files)


@lru_cache(maxsize=16)
def _input_files(cases_json: str) -> dict[str, bytes]:
    """``{case: bytes of its .npz}`` for ``{case: [cell, [[names, input spec], ...], order]}``
    given as JSON (``order``: the parameters the arguments are written in the order of)."""
    out = {}
    for case, (cell, inputs, order) in json.loads(cases_json).items():
        buffer = io.BytesIO()
        made = generate_case(Case(case, tuple(Input(tuple(n), s) for n, s in inputs), cell=cell))
        rank = {name: i for i, name in enumerate(order)}
        np.savez(buffer, **dict(sorted(made.items(), key=lambda kv: rank.get(kv[0], len(rank)))))
        out[case] = buffer.getvalue()
    return out


def strip(notebook) -> int:
    """Remove every declaration and every declared mutant (:data:`GRADER_KEYS`) from
    ``notebook`` (in place); return how many cells carried one.

    A released notebook must not carry them (they name hidden cases' inputs; a mutant's
    ``find`` is a line of the solution, its ``replace`` a wrong answer)."""
    removed = 0
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("course")
        if isinstance(meta, dict) and any(key in meta for key in GRADER_KEYS):
            for key in GRADER_KEYS:
                meta.pop(key, None)
            removed += 1
            if not meta:
                del cell["metadata"]["course"]
    return removed
