"""The form of a chapter: its sections and the words of prose on its main path.

A chapter's *main path* is what a reader reads in one sitting: every level-2 section except the
ones a reader may skip, whose titles start with "Going further", and the closing "Exercises" and
"Problem set" sections. Its *prose* is the Markdown text outside code cells, displayed maths,
inline maths and directive options; a role (``{glue:text}`key:.2f```, ``{ref}`label```) counts as
one word. Run ``python -m tests.chapterform chapters/*.md`` to print
the counts.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

#: Level-2 sections that are not on the main path.
OFF_MAIN_PATH = re.compile(r"^(Going further|Exercises|Problem set)", re.IGNORECASE)
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


@dataclass(frozen=True)
class Section:
    """One level-2 section of a chapter (the text before the first one has the title '')."""

    title: str
    prose: str

    @property
    def words(self) -> int:
        """Number of words of prose in the section."""
        return len(_WORD.findall(self.prose))

    @property
    def on_main_path(self) -> bool:
        """Whether a reader of the main path reads this section."""
        return not OFF_MAIN_PATH.match(self.title)


def _prose_lines(text: str) -> list[str]:
    """The lines of a MyST Markdown notebook that are prose (code, maths and options removed)."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.DOTALL)
    lines, fence = [], None
    for line in text.splitlines():
        opening = _FENCE.match(line.strip())
        if fence is None and opening and "{code-cell}" in line:
            fence = opening.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        if opening or re.match(r"^\s*:[\w-]+:", line) or line.startswith("(") and line.endswith(")="):
            continue
        line = re.sub(r"\{[\w:-]+\}`[^`]*`", " N ", line)   # a role (a glued number, a reference)
        lines.append(re.sub(r"\$[^$]*\$", " ", line))
    return lines


def sections(path: Path) -> list[Section]:
    """The level-2 sections of the chapter at ``path``, in order."""
    found: list[Section] = []
    title, body = "", []
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        if line.startswith("## "):
            found.append(Section(title, "\n".join(body)))
            title, body = line[3:].strip(), []
        elif not line.startswith("# "):
            body.append(line)
    found.append(Section(title, "\n".join(body)))
    return found


def main_path_words(path: Path) -> int:
    """Words of prose on the chapter's main path."""
    return sum(section.words for section in sections(path) if section.on_main_path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        parts = sections(Path(name))
        total = sum(s.words for s in parts)
        print(f"{name}: main path {main_path_words(Path(name))} words of prose, {total} in all")
