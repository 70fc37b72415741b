"""Accessibility of the book's pages (WCAG 2.1 AA), where the theme or docutils fall short.

- **Names that match what is shown** (WCAG 2.5.3): the theme's search field and colour-mode
  switch, from the templates in ``_ext/a11y/components/`` (they take precedence over
  pydata-sphinx-theme's own).
- **A folded cell's name is its text**: myst-nb labels the ``<summary>`` of a ``hide-input`` cell
  "Toggle hidden content" while it shows "Show code cell source" (WCAG 2.5.3, axe's
  ``label-content-name-mismatch``); the label is dropped, so the shown text is the name.
- **The bibliography's roles**: docutils marks each reference ``role="doc-biblioentry"``, a role
  ARIA 1.3 deprecates, inside a ``role="list"`` that then has no list items; here each one is a
  ``listitem``.
- **Contrast and visible focus**: ``_ext/a11y/static/accessibility.css``.
- **Solution toggles and copy buttons**: ``_ext/a11y/static/accessibility.js`` names each toggle
  with the text it shows and its title (WCAG 2.5.3) and says "Copied!" in a live region.
- **Formulas for screen readers**: MathJax's assistive MathML (a hidden MathML copy of every
  formula, which screen readers read) is asked for explicitly, not left to MathJax's default, and
  every formula gets its speech text from MathJax's Speech Rule Engine, served by the site
  (``accessibility.js`` puts it in the MathML's ``alttext``, for screen readers that do not read
  MathML). Formulas are no Tab stops (MathJax's ``inTabOrder``); a switch brings them back.

tests/book/test_accessibility.py runs axe-core on every page and checks the keyboard and the formulas.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent / "a11y"

#: MathJax 3 options: the assistive MathML that screen readers read, on in the document handler
#: and in the settings of MathJax's menu (which would otherwise decide); formulas out of the tab
#: order (``inTabOrder``: a chapter has hundreds, each a Tab stop before the next control), which
#: a reader who wants MathJax's explorer turns back on in MathJax's menu (right click, or the
#: page's "Explore formulas" button, ``accessibility.js``). MathJax 3.2's menu options:
#: https://docs.mathjax.org/en/v3.2/options/menu.html
MATHJAX_OPTIONS = {"enableAssistiveMml": True,
                   "menuOptions": {"settings": {"assistiveMml": True, "inTabOrder": False}},
                   "sre": {"speech": "shallow", "locale": "en", "domain": "mathspeak"}}
#: MathJax components loaded with the page: the semantic enrichment with the Speech Rule Engine,
#: which writes every formula's speech text (``sre.speech``: "shallow", the whole formula),
#: served from the site like MathJax itself (``make`` unpacks ``a11y/`` and ``sre/mathmaps/``).
MATHJAX_LOAD = ["a11y/semantic-enrich"]


def _config_inited(app, config) -> None:
    config.templates_path = [str(HERE / "components"), *config.templates_path]
    config.html_static_path = [*config.html_static_path, str(HERE / "static")]
    mathjax = dict(config.mathjax3_config or {})
    mathjax["options"] = {**MATHJAX_OPTIONS, **mathjax.get("options", {})}
    loader = dict(mathjax.get("loader", {}))
    loader["load"] = [*loader.get("load", []), *MATHJAX_LOAD]
    mathjax["loader"] = loader
    config.mathjax3_config = mathjax


#: Replacements in every page's body: what myst-nb or docutils write, and what the page gets.
BODY_FIXES = {'role="doc-biblioentry"': 'role="listitem"',
              '<summary aria-label="Toggle hidden content">': "<summary>"}


def _page_context(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if body:
        for old, new in BODY_FIXES.items():
            body = body.replace(old, new)
        context["body"] = body


def setup(app):
    app.connect("config-inited", _config_inited)
    app.connect("html-page-context", _page_context)
    app.add_css_file("accessibility.css")
    app.add_js_file("accessibility.js")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
