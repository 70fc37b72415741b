"""A hand-graded answer cannot be copied from the book.

Each marking scheme in ``course/rubrics/`` holds model answers (the text after ``**Model
answer.**`` up to ``**Marking scheme.**``). If a run of :data:`RUN` words of a model answer's prose
also stands in a page of the book (the chapters and every other page of the table of contents),
a student can copy the answer from that page; the test names the answer, the page and the words.
Maths is left out of the comparison (a formula is often both in the book and in an answer, for a
good reason); only the prose that explains it counts. It runs over whatever problem sets
``course/`` holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import ROOT
from tests.book.test_book import _toc_files

RUBRICS = sorted((ROOT / "course" / "rubrics").glob("ps*.md"))
#: Words in a row that make a copied sentence (a shorter run is a common phrase).
RUN = 12
_WORD = re.compile(r"[a-z][a-z'’-]*|\d+(?:\.\d+)?")


def prose_words(text: str) -> list[str]:
    """The words of ``text`` with its maths, code and Markdown markup removed, lower case."""
    text = re.sub(r"\$\$.*?\$\$|```.*?```", " ", text, flags=re.DOTALL)
    text = re.sub(r"\$[^$]*\$|`[^`]*`|\{[a-z:-]+\}|\[[^\]]*\]\([^)]*\)", " ", text)
    return _WORD.findall(text.lower())


def runs(words: list[str], length: int = RUN) -> set[tuple[str, ...]]:
    """Every run of ``length`` consecutive words."""
    return {tuple(words[i:i + length]) for i in range(len(words) - length + 1)}


def model_answers(rubric: Path) -> dict[str, str]:
    """The model answers of a marking scheme, by the heading of their section."""
    answers = {}
    for section in re.split(r"^## ", rubric.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        for found in re.findall(r"\*\*Model answer\.\*\*(.*?)(?=\*\*Marking scheme\.\*\*|\Z)",
                                body, flags=re.DOTALL):
            answers[heading.strip()] = answers.get(heading.strip(), "") + found
    return answers


def copied(answer: str, pages: dict[str, str]) -> list[tuple[str, str]]:
    """``(page, words)`` for every run of the answer's prose that stands in a page."""
    mine = runs(prose_words(answer))
    found = []
    for name, text in pages.items():
        shared = mine & runs(prose_words(text))
        if shared:
            found.append((name, " ".join(min(shared))))
    return found


def test_a_copied_sentence_is_found_and_a_shared_formula_is_not():
    page = {"ch": "The residuals of a rank-k fit are orthogonal to every kept direction, "
                  "as the projection theorem says. Then $R = X - XP$ holds."}
    answer = ("Write $R = X - XP$. The residuals of a rank-k fit are orthogonal to every kept "
              "direction, as the projection theorem says.")
    [(name, words)] = copied(answer, page)
    assert name == "ch" and len(words.split()) == RUN
    assert words in ("the residuals of a rank-k fit are orthogonal to every kept direction as the "
                     "projection theorem says")
    assert copied("Write $R = X - XP$ and use the orthogonality of the kept basis.", page) == []


def test_model_answers_are_read_from_each_section(tmp_path):
    text = ("# Title\n\n## `q1` - 2 points\n\n**Model answer.** First answer.\n\n"
            "**Marking scheme.**\n\n| 1 | x |\n\n## `q2` - 1 point\n\n**Model answer.** Second.\n")
    path = tmp_path / "ps0_example.md"
    path.write_text(text)
    answers = model_answers(path)
    assert {k: v.strip() for k, v in answers.items()} == {"`q1` - 2 points": "First answer.",
                                                          "`q2` - 1 point": "Second."}


def _book_pages() -> dict[str, str]:
    pages = {}
    for name in ["intro", *_toc_files()]:
        for suffix in (".md", ".ipynb"):
            path = ROOT / f"{name}{suffix}"
            if path.exists():
                pages[name] = path.read_text(encoding="utf-8")
    return pages


@pytest.mark.parametrize("rubric", RUBRICS, ids=lambda p: p.stem)
def test_no_model_answer_stands_in_the_book(rubric):
    answers = model_answers(rubric)
    assert answers, f"{rubric.name}: no model answer found (is the format still **Model answer.**?)"
    pages = _book_pages()
    found = [f"{heading}: '{words} ...' stands in {page}"
             for heading, answer in answers.items() for page, words in copied(answer, pages)]
    assert not found, (f"{rubric.name}: model answers a student can copy from the book:\n"
                       + "\n".join(found))
