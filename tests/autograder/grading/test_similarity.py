"""The similarity report: planted copies come out on top, above distinct honest work.

For every problem set, three honest students (the reference solution and the two of
``course/honest``) and, for each of them, four disguised copies: local variables renamed, functions
reordered, comments and whitespace changed, and all three at once. Every copy must pair with its
original (and with the other copies of it) more closely than any two distinct honest solutions
pair, or than a copy pairs with someone else's work.
"""

from __future__ import annotations

import ast
import builtins
import io
import itertools
import keyword
import random
import re
import subprocess
import sys
import time
import tokenize

import pytest

from autograder.grading.problemset import ProblemSet
from autograder.grading.similarity import (
    StudentCode,
    _release_lines,
    _segments,
    _tokens,
    _winnow,
    find_similar,
    student_code,
)
from autograder.pages.similarity import write_similarity
from tests import ROOT
from tests.honest import builder, honest_notebooks, with_honest_answers
from tests.submissions import _gid, to_bytes

PROBLEM_SETS = with_honest_answers()


# --- disguises ----------------------------------------------------------------------------------

def _answer_ids(nb) -> list[str]:
    return [_gid(c) for c in nb.cells if c.cell_type == "code"
            and c.get("metadata", {}).get("nbgrader", {}).get("solution")]


def _protected(nb) -> set[str]:
    """Names a copy must keep: everything the notebook's own cells use, functions, parameters,
    imports (renaming them would break the notebook or its recorded checks)."""
    names = set(dir(builtins)) | set(keyword.kwlist)
    answers = set(_answer_ids(nb))
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        if _gid(c) not in answers:
            names |= set(re.findall(r"[A-Za-z_]\w*", c.source))
            continue
        for node in ast.walk(ast.parse(c.source)):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                if isinstance(node, ast.FunctionDef):
                    names.add(node.name)
                a = node.args
                names |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(al.asname or al.name).split(".")[0] for al in node.names}
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
                pass
    return names


def rename_locals(source: str, protected: set[str], tag: str) -> str:
    """Every local variable gets another name (``total`` -> ``acc3``)."""
    stored = {n.id for n in ast.walk(ast.parse(source))
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - protected
    mapping = {name: f"{tag}{i}" for i, name in enumerate(sorted(stored))}
    lines = source.splitlines(keepends=True)
    offsets = list(itertools.accumulate([0] + [len(x) for x in lines]))
    edits = []
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, t in enumerate(toks):
        prev = toks[i - 1].string if i else ""
        if t.type == tokenize.NAME and t.string in mapping and prev != ".":
            start = offsets[t.start[0] - 1] + t.start[1]
            edits.append((start, start + len(t.string), mapping[t.string]))
    for start, end, new in reversed(edits):
        source = source[:start] + new + source[end:]
    return source


def reorder_functions(source: str) -> str:
    """Top-level functions in the reverse order (imports stay first)."""
    chunks = re.split(r"(?m)^(?=def )", source)
    head, defs = chunks[0], [c.rstrip("\n") + "\n" for c in chunks[1:]]
    return head + "\n\n".join(reversed(defs)) if len(defs) > 1 else source


def recomment(source: str) -> str:
    """Comments dropped and others written, two-space indents, blank lines added."""
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    for t in reversed([t for t in toks if t.type == tokenize.COMMENT]):
        row, col = t.start
        lines[row - 1] = lines[row - 1][:col].rstrip() + "\n"
    out = ["# My solution, worked out with the lecture notes.\n"]
    for line in lines:
        stripped = line.lstrip(" ")
        indent = (len(line) - len(stripped)) // 2
        if not stripped.strip():
            continue
        out.append(" " * indent + stripped)
        if stripped.startswith("return"):
            out.append("\n")
        if stripped.startswith("def "):
            out.append(" " * (indent + 2) + "# compute the answer step by step\n")
    return "".join(out)


DISGUISES = {
    "renamed": lambda src, prot: rename_locals(src, prot, "acc"),
    "reordered": lambda src, prot: reorder_functions(src),
    "recommented": lambda src, prot: recomment(src),
    "all": lambda src, prot: recomment(reorder_functions(rename_locals(src, prot, "w"))),
}


def disguised(nb, how: str):
    import copy

    nb = copy.deepcopy(nb)
    protected = _protected(nb)
    for c in nb.cells:
        if _gid(c) in _answer_ids(nb):
            c.source = DISGUISES[how](c.source, protected)
            compile(c.source, "<copy>", "exec")  # a copy is still valid Python
    return nb


# --- the class --------------------------------------------------------------------------------

def _family(student: str) -> str:
    return student.split("-")[0]


@pytest.fixture(scope="module", params=PROBLEM_SETS)
def planted(request):
    """``(problem set, {student: bytes})``: three honest students and four copies of each."""
    name = request.param
    subs = {}
    for original, nb in honest_notebooks(name).items():
        subs[original] = to_bytes(nb)
        for how in DISGUISES:
            subs[f"{original}-copy{how}"] = to_bytes(disguised(nb, how))
    return name, subs


def test_copies_are_paired_with_their_original_above_distinct_honest_work(planted, tmp_path):
    name, subs = planted
    pairs = write_similarity(name, subs, tmp_path, top=10_000)
    score = {frozenset((p.a, p.b)): p.score for p in pairs}
    honest = [s for s in subs if "-" not in s]
    assert len(honest) == 3
    distinct = max(score.get(frozenset(pair), 0.0) for pair in itertools.combinations(honest, 2))
    for student in subs:
        if "-" in student:
            together = score.get(frozenset((student, _family(student))), 0.0)
            assert together > distinct, (name, student, together, distinct)
    # Above every pair across families, too: the copies are on top of the page.
    same = [p.score for p in pairs if _family(p.a) == _family(p.b)]
    other = [p.score for p in pairs if _family(p.a) != _family(p.b)]
    assert len(same) == 3 * 10, "every pair within a family shares code"
    assert min(same) > max(other, default=0.0), (name, min(same), max(other))
    assert {_family(p.a) == _family(p.b) for p in pairs[:30]} == {True}
    page = (tmp_path / "similarity.html").read_text()
    assert page.index(pairs[0].a) < page.index("</details>")


def test_a_copy_of_a_plain_rename_scores_as_the_original(planted):
    name, subs = planted
    ps = ProblemSet(name)
    starter = _release_lines(ps)
    a = student_code(ps, "loops", subs["loops"], starter)
    b = student_code(ps, "copy", subs["loops-copyall"], starter)
    assert set(a.fingerprints) == set(b.fingerprints)


def test_only_student_written_code_counts():
    """Two blank releases share nothing; starter code, docstrings and comments are no tokens."""
    ps = ProblemSet("ps1_pca")
    b = builder("ps1_pca")
    blank = to_bytes(b.blank())
    starter = _release_lines(ps)
    assert student_code(ps, "x", blank, starter).fingerprints == {}
    assert find_similar([student_code(ps, s, blank, starter) for s in "xyz"]) == []
    source = ('def center(X):\n    """Centre the columns."""\n    # YOUR CODE HERE\n'
              "    m = X.mean(0)  # mine\n    return X - m, m\n")
    tokens = [t[0] for t in _tokens(source, starter)]
    assert tokens == ["V", "=", "V", ".", "mean", "(", "0", ")",
                      "return", "V", "-", "V", ",", "V"]


def test_a_cell_the_student_added_counts():
    ps = ProblemSet("ps1_pca")
    b = builder("ps1_pca")
    nb = b.correct()
    from tests.submissions import insert_after

    insert_after(nb, "center", "def my_helper(values):\n    acc = 0\n    for v in values:\n"
                               "        acc += v * v\n    return acc ** 0.5\n")
    code = student_code(ps, "x", to_bytes(nb))
    assert [label for label, _ in code.cells].count("cell added by the student") == 1


def test_the_page_escapes_and_highlights(tmp_path):
    b = builder("ps1_pca")
    nb = b.correct()
    subs = {"eve<script>": to_bytes(nb), "mallory": to_bytes(disguised(nb, "all"))}
    pairs = write_similarity("ps1_pca", subs, tmp_path)
    assert len(pairs) == 1 and pairs[0].score > 0.9
    page = (tmp_path / "similarity.html").read_text()
    assert "<script" not in page and "eve&lt;script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.count("<mark>") > 10
    assert "<mark>" in page.split("mallory")[-1]  # both sides are highlighted
    assert "grades.csv" in page  # says it changes no grade


def test_the_index_scales_to_a_mooc_and_finds_the_planted_pair():
    """3000 students whose answers are each one of the three honest versions of every cell (so
    every fingerprint is shared by hundreds: no evidence), and one pair sharing a helper cell."""
    ps = ProblemSet("ps1_pca")
    starter = _release_lines(ps)
    versions = {gid: [] for gid in ps.solution_ids}
    for nb in honest_notebooks("ps1_pca").values():
        for c in nb.cells:
            if _gid(c) in versions and c.cell_type == "code":
                versions[_gid(c)].append(c.source)
    versions = {g: v for g, v in versions.items() if v}
    prints = {g: [[f for seg in _segments(s, starter) for f in _winnow(seg)] for s in v]
              for g, v in versions.items()}
    helper = ("def tidy(values, scale):\n    out = []\n    for v in values:\n        if v > scale:\n"
              "            out.append(v / scale - 1)\n        else:\n            out.append(0.0)\n"
              "    return sorted(out, reverse=True)[:3]\n")
    helper_prints = [f for seg in _segments(helper, starter) for f in _winnow(seg)]
    rng = random.Random(0)
    codes = []
    for i in range(3000):
        code = StudentCode(f"s{i:04d}")
        for gid, options in prints.items():
            cell = len(code.cells)
            code.cells.append((gid, versions[gid][0]))
            for h, start, end in options[rng.randrange(len(options))]:
                code.fingerprints.setdefault(h, []).append((cell, start, end))
        if i in (17, 2345):
            code.cells.append(("added", helper))
            for h, start, end in helper_prints:
                code.fingerprints.setdefault(h, []).append((len(code.cells) - 1, start, end))
        codes.append(code)
    start = time.perf_counter()
    pairs = find_similar(codes, top=5)
    elapsed = time.perf_counter() - start
    assert (pairs[0].a, pairs[0].b) == ("s0017", "s2345"), pairs[:2]
    assert elapsed < 30, f"{elapsed:.1f} s for 3000 submissions"


@pytest.mark.slow
def test_the_command_writes_the_page_and_no_grades(tmp_path):
    b = builder("ps1_pca")
    folder = tmp_path / "subs"
    for student, nb in (("ann", b.correct()), ("bob", disguised(b.correct(), "all")),
                        ("cat", b.blank())):
        (folder / student).mkdir(parents=True)
        (folder / student / "ps1_pca.ipynb").write_bytes(to_bytes(nb))
    done = subprocess.run([sys.executable, "-m", "autograder", "similarity", "ps1_pca",
                           str(folder), "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ann and bob" in done.stdout
    assert (tmp_path / "out" / "similarity.html").is_file()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["similarity.html"]
