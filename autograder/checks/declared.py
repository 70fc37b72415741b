"""Declared checks: the checks :mod:`autograder.checks.declaration`'s declarations describe.

A test cell's declaration (``metadata.course.check``, its format in
:mod:`autograder.checks.declaration`) becomes a check ``check(answers) -> Outcome``, the contract
of :mod:`autograder.checks`: each declared case's recorded outputs are compared with the reference
called on the same seeded inputs, with the declared comparison and tolerances; a ``_visible``
cell is all or nothing, a ``_hidden`` one weighted by its cases. The messages name the inputs
(:func:`_describe`), so they never go stale when an input changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

import numpy as np

from autograder.checks.answers import Answers
from autograder.checks.declaration import (
    COMPARISONS,
    GENERATORS,
    INPUTS_FOLDER,
    KEY,
    Case,
    Declaration,
    DeclarationError,
    Output,
    case_inputs,
    dataset_name,
    declarations,
    declared_cases,
    generate,
    generate_case,
    generate_input,
    is_checked,
    reference_of,
    resolve,
    strip,
    write_inputs,
)
from autograder.checks.outcome import Outcome, first_problem, weighted
from autograder.checks.record_calls import record_calls
from coursedata.compare import TOGETHER
from coursedata.results import problems

__all__ = [
    "KEY",
    "GENERATORS",
    "COMPARISONS",
    "Output",
    "Case",
    "Declaration",
    "DeclarationError",
    "declarations",
    "declared_cases",
    "resolve",
    "generate",
    "generate_input",
    "case_inputs",
    "build_checks",
    "expected_values",
    "write_inputs",
    "equivalent_forms",
    "strip",
    "INPUTS_FOLDER",
]


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def _describe(inputs: dict, spec: dict) -> str:
    """The inputs in words: scalars by value, arrays by shape (a boolean one with its number of
    True entries), data sets by name. ``spec`` is ``{argument: spec of its input}``
    (:attr:`Case.sources`)."""
    words = []
    for arg, value in inputs.items():
        source = spec.get(arg)
        if np.ndim(value) == 0:
            words.append(
                f"{arg}={float(value):g}" if not isinstance(value, str) else f"{arg}={value!r}"
            )
        elif isinstance(source, Mapping) and "dataset" in source:
            words.append(
                f"{arg} = {dataset_name(**source['dataset'])} ({np.shape(value)[0]} values)"
            )
        elif np.asarray(value).dtype == bool:  # a mask: how many entries it selects
            words.append(f"{arg} of shape {np.shape(value)} ({int(np.sum(value))} True)")
        else:
            words.append(f"{arg} of shape {np.shape(value)}")
    return ", ".join(words)


def expected_values(case: Case) -> tuple[tuple, list[str]]:
    """The reference's values for ``case`` (one per declared output) and each value and its
    inputs in words, for the messages."""
    inputs = generate_case(case)
    if case.reference is None:  # inputs only: a Python check scores this case
        raise DeclarationError(f"case {case.name!r} declares no reference to compare with")
    expected = reference_of(case)(**inputs)
    outputs = case.outputs
    expected = expected if len(outputs) > 1 else (expected,)
    if len(expected) != len(outputs):
        raise DeclarationError(
            f"case {case.name!r}: {case.reference} returns {len(expected)} "
            f"values, but {len(outputs)} outputs are declared"
        )
    about = _describe(inputs, case.sources)
    return tuple(expected), [f"{o.name} for {about}" if about else o.name for o in outputs]


def _problems(case: Case, answers: Answers) -> list[str | None]:
    """One message (or ``None`` when right) per output of ``case``."""
    expected, whats = expected_values(case)
    return problems(lambda: answers.get(case.name), case.outputs, expected, whats)


def _check(declaration: Declaration, cases: Mapping[str, Case], answers: Answers) -> Outcome:
    if declaration.weights is None:  # visible: all or nothing
        return first_problem(
            *[p for c in declaration.cases.values() for p in _problems(c, answers)]
        )
    parts = []
    for case, weight in declaration.weights.items():
        problems = _problems(cases[case], answers)
        shares = [o.weight for o in cases[case].outputs]
        parts += [(weight * s / sum(shares), p) for s, p in zip(shares, problems)]
    return weighted(*parts)


def build_checks(notebook) -> dict[str, Callable[[Answers], Outcome]]:
    """``{grade_id: check}`` for every cell whose declaration is a check (not inputs only)."""
    found = declarations(notebook)
    cases = {c: case for d in found.values() for c, case in d.cases.items()}
    return {gid: partial(_check, d, cases) for gid, d in found.items() if is_checked(d, cases)}


def equivalent_forms(notebook) -> dict[tuple, str]:
    """The declared symmetries as the self-tests' ``EQUIVALENT_FORMS``:
    ``{(function, output, transform): reason}``, the function named as the cell that records the
    case calls it (as its reference is, for a case no cell records); outputs compared together
    (:data:`coursedata.compare.TOGETHER`) are negated together (``output`` their indices)."""
    transform = {
        "rows_up_to_sign": "negated",
        "columns_up_to_sign": "negated",
        "rows_up_to_constant": "shifted",
    }
    recorded = {r.case: r.function for r in record_calls(notebook)}
    out: dict[tuple, str] = {}
    for case in declared_cases(notebook).values():
        if case.reference is None:  # inputs only: no declared comparison
            continue
        function = recorded.get(case.name, case.reference.partition(":")[2])
        for i, o in enumerate(case.outputs):
            if o.compare in transform:
                index = None if len(case.outputs) == 1 else i
                out[(function, index, transform[o.compare])] = (
                    f"{o.name}: compared {o.compare.replace('_', ' ')}"
                )
        for kind in TOGETHER:  # one sign flipped in all of them: Q = -I
            group = tuple(i for i, o in enumerate(case.outputs) if o.compare == kind)
            if group:
                names = [case.outputs[i].name for i in group]
                whole = len(group) == len(case.outputs)
                out[(function, None if whole else group, "negated")] = (
                    f"{', '.join(names)}: compared {kind}"
                )
    return out
