/* Accessibility of the book's pages where the theme's scripts fall short (_ext/course_a11y.py).
 *
 * - Solution toggles (sphinx-togglebutton): their name "Toggle hidden content" does not contain
 *   the text they show, "Click to show" / "Click to hide" (WCAG 2.5.3, label in name). Each gets
 *   the name "<shown text>: <its title>", kept in step with the shown text.
 * - Copy buttons (sphinx-copybutton): their "Copied!" is a tooltip a screen reader never hears; it
 *   is also said in a polite live region (WCAG 4.1.3, status messages).
 * - Speech text: MathJax's Speech Rule Engine writes each formula's speech as the container's
 *   aria-label and hides the assistive MathML from screen readers; here the speech moves to the
 *   MathML's alttext (and aria-label), so that a screen reader with a MathML reader (MathCAT,
 *   MathPlayer) still reads the MathML and one without reads the speech, not "θ divides D".
 * - Code and its output: each cell's code and output are named groups ("Code", "Output").
 * - Formulas are out of the tab order (MathJax's menu setting inTabOrder, _ext/course_a11y.py);
 *   a pressed-or-not button before the article's first formula puts them back in, so that the
 *   keyboard reaches each formula and MathJax's menu on it (its explorer reads a formula's parts
 *   with the arrow keys once activated there).
 * - An inline formula wider than its line (at 200 % text) scrolls in its line, as a Tab stop,
 *   instead of being cut; one that fits is no Tab stop.
 * - A box that scrolls (a display formula, code, an output, a table) is a Tab stop also when it
 *   begins to scroll after load, as text enlarged on an open page makes it do.
 * - The sidebar's part captions are no headings (the theme's role=heading put six level-2
 *   headings before the page's title): each names its list of links.
 */
(() => {
  "use strict";

  const TITLE_OF = (button) => {
    const title = button.closest(".admonition-title") ||
      document.getElementById(button.dataset.target)?.querySelector(".admonition-title");
    if (!title) return "";
    const copy = title.cloneNode(true);
    copy.querySelectorAll("button").forEach((b) => b.remove());
    return copy.textContent.replace(/\s+/g, " ").trim();
  };

  const nameToggle = (button) => {
    const hint = button.dataset.toggleHint || "";
    const title = TITLE_OF(button);
    button.setAttribute("aria-label", title ? `${hint}: ${title}` : hint);
  };

  const nameToggles = () => {
    const buttons = document.querySelectorAll("button.toggle-button");
    buttons.forEach(nameToggle);
    const watch = new MutationObserver((changes) => changes.forEach((c) => nameToggle(c.target)));
    buttons.forEach((b) => watch.observe(b, {attributes: true, attributeFilter: ["data-toggle-hint"]}));
  };

  const announceCopies = () => {
    const status = document.createElement("div");
    status.className = "visually-hidden";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    document.body.appendChild(status);
    document.addEventListener("click", (event) => {
      const button = event.target.closest("button.copybtn");
      if (!button) return;
      status.textContent = "";
      setTimeout(() => { status.textContent = "Copied!"; }, 100);
    });
  };

  const offerExplorer = () => {
    const first = document.querySelector("article mjx-container");
    if (!first) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "btn btn-sm btn-outline-secondary course-formula-explorer";
    button.textContent = "Explore formulas with the keyboard";
    button.setAttribute("aria-pressed", "false");
    button.addEventListener("click", () => {
      const on = button.getAttribute("aria-pressed") !== "true";
      document.querySelectorAll("mjx-container").forEach((c) => {
        if (on) c.setAttribute("tabindex", "0");
        else if (!(c.scrollWidth > c.clientWidth + 1)) c.removeAttribute("tabindex");
      });
      button.setAttribute("aria-pressed", String(on));
    });
    const block = first.closest("p, div.math, li, section") || first;
    block.parentNode.insertBefore(button, block);
  };

  const speechToMathml = () => {
    document.querySelectorAll("mjx-container[aria-label]").forEach((container) => {
      const math = container.querySelector("mjx-assistive-mml math");
      if (!math) return;
      const speech = container.getAttribute("aria-label");
      math.setAttribute("alttext", speech);
      math.setAttribute("aria-label", speech);
      container.removeAttribute("aria-label");
      container.querySelector("mjx-assistive-mml").removeAttribute("aria-hidden");
    });
  };

  // A display formula wider than its column scrolls sideways: it stays a Tab stop, so that the
  // keyboard can scroll it (WCAG 2.1.1; axe's scrollable-region-focusable). Checked again
  // whenever such a box changes size, as text-only zoom after the page is shown makes more of
  // them scroll.
  const FORMULAS = "div.math mjx-container, .math mjx-container[display]";
  const focusableIfScrolling = (c) => {
    if (c.scrollWidth > c.clientWidth + 1 && c.getAttribute("tabindex") !== "0") {
      c.setAttribute("tabindex", "0");
    }
  };

  // The boxes pydata-sphinx-theme makes Tab stops when they scroll (addTabStopsToScrollableElements:
  // code, a cell's output such as a pandas table, a table), by the theme's own test. The theme
  // checks them at load and when the window is resized only, and text enlarged after load (WCAG
  // 1.4.4) resizes no window: here each is checked again whenever its box changes size.
  const BOXES = "pre, .cell_output > .output, .jp-RenderedHTMLCommon, .pst-scrollable-table-container";
  const stopIfScrolling = (box) => {
    const scrolls = box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight;
    box.tabIndex = scrolls ? 0 : -1;
  };

  // Each of ``selector``'s elements is checked now and whenever its box changes size.
  const checkWhenResized = (selector, check) => {
    const watch = new ResizeObserver((entries) => entries.forEach((e) => check(e.target)));
    document.querySelectorAll(selector).forEach((element) => {
      check(element);
      watch.observe(element);
    });
  };

  // An inline formula wider than its line (at 200 % text, WCAG 1.4.4) is cut by the theme's
  // span.math {overflow: hidden}, and MathJax 3 breaks no inline formula: that one, and only
  // that one, scrolls sideways in its line instead, as a named Tab stop the keyboard can scroll
  // (WCAG 2.1.1; axe's scrollable-region-focusable). A formula that fits stays out of the tab
  // order. Checked again whenever a formula's box changes size (window, zoom, text size).
  const INLINE_SCROLLS = "course-math-scrolls";
  // The formula as drawn (mjx-math), not the span's scrollWidth: MathJax's assistive MathML,
  // hidden and absolutely placed, is a few pixels wider than most formulas.
  const drawnWider = (span) => {
    const drawn = span.querySelector("mjx-math");
    return !!drawn && drawn.getBoundingClientRect().width > span.clientWidth + 1;
  };

  const scrollWhenWider = (span) => {
    const wider = drawnWider(span);
    if (wider === span.classList.contains(INLINE_SCROLLS)) return;
    span.classList.toggle(INLINE_SCROLLS, wider);
    if (wider) {
      span.setAttribute("tabindex", "0");
      span.setAttribute("role", "group");
      span.setAttribute("aria-label", "Formula wider than its line, scrolls sideways");
    } else {
      ["tabindex", "role", "aria-label"].forEach((name) => span.removeAttribute(name));
    }
  };

  const inlineFormulasScrollWhenWider = () => {
    const spans = document.querySelectorAll("article span.math");
    const watch = new ResizeObserver((entries) => {
      entries.forEach((e) => scrollWhenWider(e.target.closest("span.math")));
    });
    spans.forEach((span) => {
      scrollWhenWider(span);
      watch.observe(span);
      const formula = span.querySelector("mjx-container");
      if (formula) watch.observe(formula);
    });
  };

  // Copy buttons on code only, not on its output (sphinx-copybutton puts one on every block):
  // code and output then differ for a screen reader too, and the tab order loses a stop per output.
  const nameCells = () => {
    document.querySelectorAll("div.cell_output button.copybtn").forEach((b) => b.remove());
    for (const [selector, name] of [["div.cell_input", "Code"], ["div.cell_output", "Output"]]) {
      document.querySelectorAll(selector).forEach((el) => {
        el.setAttribute("role", "group");
        el.setAttribute("aria-label", name);
      });
    }
  };

  // The sidebar's part captions ("Getting started", ...) are marked headings of level 2 by the
  // theme, so a page's list of headings starts with them, before its title (h1): here each is
  // the name of its list of links instead, and no heading.
  const captionsNameLists = () => {
    document.querySelectorAll(".bd-sidebar-primary p.caption[role=heading]").forEach((caption, i) => {
      caption.removeAttribute("role");
      caption.removeAttribute("aria-level");
      caption.id = caption.id || `course-sidebar-caption-${i + 1}`;
      const list = caption.nextElementSibling;
      if (list && list.matches("ul")) list.setAttribute("aria-labelledby", caption.id);
    });
  };

  // After the theme's own scripts, which build the toggles on DOMContentLoaded.
  window.addEventListener("load", () => {
    captionsNameLists();
    nameToggles();
    announceCopies();
    nameCells();
    checkWhenResized(BOXES, stopIfScrolling);  // on every page, with formulas or none
    window.MathJax?.startup?.promise?.then(() => {
      speechToMathml();
      checkWhenResized(FORMULAS, focusableIfScrolling);
      inlineFormulasScrollWhenWider();
      offerExplorer();
    });
  });
})();
