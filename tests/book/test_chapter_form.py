"""Every chapter has the form of a textbook chapter.

- Its main path (:mod:`tests.chapterform`) is readable in one sitting: at most
  :data:`MAIN_PATH_WORDS` words of prose; what goes further sits in "Going further" sections.
- Its Overview and its Summary point the reader to the Going-further sections it has, and every
  ``{ref}`` link in them points to a label the book defines.
- It has a "Common mistakes" box.
- The options of its code cells are valid YAML without a repeated key (a repeated ``image:`` or
  ``alt:`` silently drops the first, and with it a figure's alternative text).

These rules hold for any chapter in ``chapters/``; none pins this course's content.
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests import ROOT
from tests.chapterform import main_path_words, sections

CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
MAIN_PATH_WORDS = 4500
_OVERVIEW = re.compile(r"```\{admonition\} Overview\n(.*?)\n```", re.DOTALL)


class _UniqueKeys(yaml.SafeLoader):
    """A YAML loader that refuses a mapping with a repeated key."""


def _mapping(loader: _UniqueKeys, node: yaml.MappingNode) -> dict:
    keys = [loader.construct_object(key) for key, _ in node.value]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise yaml.constructor.ConstructorError(None, None, f"repeated key(s) {repeated}",
                                                node.start_mark)
    return loader.construct_mapping(node)


_UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def cell_options(text: str) -> list[str]:
    """The YAML option blocks (between ``---`` lines) at the top of each code cell."""
    return re.findall(r"^```\{code-cell\}[^\n]*\n---\n(.*?)\n---\n", text, flags=re.DOTALL | re.M)


def repeated_keys(block: str) -> str | None:
    """Why ``block`` is not valid YAML with unique keys, or ``None``."""
    try:
        yaml.load(block, Loader=_UniqueKeys)  # a SafeLoader subclass
    except yaml.YAMLError as error:
        return str(error).splitlines()[0]
    return None


def test_a_repeated_option_key_is_found():
    assert repeated_keys("mystnb:\n  image:\n    alt: a\n  image:\n    alt: b\n") is not None
    assert repeated_keys("mystnb:\n  image:\n    alt: a\n  figure:\n    caption: b\n") is None


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_main_path_is_readable_in_one_sitting(chapter):
    words = main_path_words(chapter)
    assert words <= MAIN_PATH_WORDS, (f"{chapter.name}: {words} words of prose on the main path; "
                                      "move what goes further into '## Going further: ...'")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_overview_and_summary_point_to_what_goes_further(chapter):
    text = chapter.read_text(encoding="utf-8")
    further = [s.title for s in sections(chapter) if s.title.startswith("Going further")]
    overview = _OVERVIEW.search(text)
    summary = [s.prose for s in sections(chapter) if s.title == "Summary"]
    assert overview, f"{chapter.name}: no Overview admonition"
    assert summary, f"{chapter.name}: no Summary section"
    for name, part in (("Overview", overview.group(1)), ("Summary", summary[0])):
        mentions = part.lower().count("going further")
        assert not further or mentions, f"{chapter.name}: the {name} does not name {further}"


_LABEL = re.compile(r"^\(([\w:-]+)\)=$|^:label:\s*([\w:-]+)\s*$", re.MULTILINE)
_REF = re.compile(r"\{ref\}`(?:[^`<]*<([^`>]+)>|([^`<]+))`")


def book_labels() -> set[str]:
    """The section labels ``(name)=`` and directive labels ``:label: name`` of every chapter."""
    return {a or b for chapter in CHAPTERS
            for a, b in _LABEL.findall(chapter.read_text(encoding="utf-8"))}


def test_a_ref_link_is_read_with_or_without_its_text():
    found = [a or b for a, b in _REF.findall("see {ref}`sec-x` and {ref}`the y <sec-y>`")]
    assert found == ["sec-x", "sec-y"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_overview_and_summary_links_resolve(chapter):
    text = chapter.read_text(encoding="utf-8")
    overview = _OVERVIEW.search(text)
    summary = re.search(r"^## Summary\n(.*?)(?=^## |\Z)", text, flags=re.DOTALL | re.MULTILINE)
    boxes = "\n".join(found.group(1) for found in (overview, summary) if found)
    targets = [a or b for a, b in _REF.findall(boxes)]
    missing = sorted(set(targets) - book_labels())
    assert not missing, f"{chapter.name}: Overview or Summary links to undefined labels {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_has_a_common_mistakes_box(chapter):
    assert re.search(r"\{admonition\} Common mistakes", chapter.read_text(encoding="utf-8"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_code_cell_options_repeat_no_key(chapter):
    text = chapter.read_text(encoding="utf-8")
    faults = [f"{block.splitlines()[0]} ...: {why}" for block in cell_options(text)
              if (why := repeated_keys(block))]
    assert not faults, f"{chapter.name}: code-cell options with a repeated key: {faults}"
