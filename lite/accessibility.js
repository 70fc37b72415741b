/* Accessibility of the JupyterLite notebooks, where JupyterLab and Notebook 7 fall short.
 *
 * _ext/course_lite.py copies this file into the JupyterLite site (static/course/) and loads it
 * in every page of the site (lab, notebooks, tree, ...). It watches the page (JupyterLab builds
 * it after loading and adds cells as they scroll in) and, on every change:
 *
 * - names each cell's code editor (CodeMirror's role=textbox, which has no name: axe's
 *   aria-input-field-name; a screen reader says "text box" for every cell) "Cell N, code, in
 *   <the section's heading>", N as in the status bar's "Cell N/M", and describes it by the
 *   keyboard note below;
 * - gives the cells of the notebook's role=feed the role article that a feed's children have
 *   (aria-required-children), each named "Cell N, code" or "Cell N, text";
 * - names the heading cells' collapse buttons "Fold the section <heading>", with
 *   aria-expanded (button-name);
 * - names the Jupyter logo link of Notebook 7 (link-name) by what it opens;
 * - the skip link of Notebook 7 (tabindex=1, to "#first-cell", which no element is): its target
 *   becomes the notebook's first cell, it takes the active cell's focus, and it leaves the
 *   positive tabindex (WCAG 2.4.3, focus order);
 * - moves aria-pressed from a toolbar button's custom element (jp-button, no role there: axe's
 *   aria-allowed-attr) onto the button inside it;
 * - shows a note above the cells: in a cell's editor Tab indents, Escape then Tab leaves it
 *   (WCAG 2.1.2, no keyboard trap, says the way out);
 * - puts a rendered text cell that scrolls sideways (a display formula wider than the cell) in
 *   the tab order, named, so that the keyboard can scroll it (WCAG 2.1.1; axe's
 *   scrollable-region-focusable), and takes it out again once it no longer scrolls.
 */
(() => {
  "use strict";

  const NOTE_ID = "course-keyboard-note";
  const NOTE = "Keyboard: in a cell's editor, Tab indents; press Escape, then Tab, to leave it. " +
    "Out of the editor, the Up and Down arrows choose a cell, Enter edits it, Shift+Enter runs it.";

  const text = (el) => (el ? el.textContent.replace(/¶/g, "").replace(/\s+/g, " ").trim() : "");

  const headingOf = (cell) => text(cell.querySelector(
    ".jp-MarkdownOutput h1, .jp-MarkdownOutput h2, .jp-MarkdownOutput h3, " +
    ".jp-MarkdownOutput h4, .jp-MarkdownOutput h5, .jp-MarkdownOutput h6"));

  /** The heading of the section a cell is in: its own, or the last one of a cell before it. */
  const sectionOf = (cell) => {
    for (let c = cell; c; c = c.previousElementSibling) {
      const heading = c.classList.contains("jp-MarkdownCell") ? headingOf(c) : "";
      if (heading) return heading;
    }
    return "";
  };

  const setAttr = (el, name, value) => {
    if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  };

  /** A Tab stop, named ``name``, while ``el`` scrolls sideways; none (as before) once it does not. */
  const scrollable = (el, name) => {
    const scrolls = el.scrollWidth > el.clientWidth + 1;
    if (scrolls) {
      setAttr(el, "tabindex", "0");
      setAttr(el, "role", "group");
      setAttr(el, "aria-label", name);
      el.dataset.courseScrolls = "1";
    } else if (el.dataset.courseScrolls) {
      ["tabindex", "role", "aria-label"].forEach((a) => el.removeAttribute(a));
      delete el.dataset.courseScrolls;
    }
  };

  const nameCell = (cell) => {
    const number = Number(cell.dataset.windowedListIndex) + 1;
    if (!number) return;
    const kind = cell.classList.contains("jp-CodeCell") ? "code" :
      cell.classList.contains("jp-MarkdownCell") ? "text" : "raw";
    const section = sectionOf(cell);
    const name = `Cell ${number}, ${kind}` + (section ? `, in “${section}”` : "");
    if (cell.parentElement && cell.parentElement.getAttribute("role") === "feed") {
      setAttr(cell, "role", "article");
      setAttr(cell, "aria-label", `Cell ${number}, ${kind}`);
    }
    const editor = cell.querySelector(".cm-content[role=textbox]");
    if (editor) {
      setAttr(editor, "aria-label", name);
      if (document.getElementById(NOTE_ID)) setAttr(editor, "aria-describedby", NOTE_ID);
    }
    const rendered = cell.querySelector(".jp-RenderedMarkdown");
    if (rendered) scrollable(rendered, `Cell ${number}, text, scrolls sideways`);
    const fold = cell.querySelector("button.jp-collapseHeadingButton");
    if (fold) {
      const heading = headingOf(cell) || section;
      setAttr(fold, "aria-label", `Fold the section “${heading}”`);
      setAttr(fold, "aria-expanded",
        fold.classList.contains("jp-mod-collapsed") || cell.classList.contains("jp-mod-collapsed")
          ? "false" : "true");
    }
  };

  const addNote = () => {
    if (document.getElementById(NOTE_ID)) return;
    const outer = document.querySelector(".jp-Notebook .jp-WindowedPanel-outer");
    const inner = outer && outer.querySelector(":scope > .jp-WindowedPanel-inner");
    if (!inner) return;
    const note = document.createElement("p");
    note.id = NOTE_ID;
    note.className = "course-keyboard-note";
    note.textContent = NOTE;
    note.style.cssText = "margin: 0.5em 1em; padding: 0.4em 0.6em; font-size: var(--jp-ui-font-size1);" +
      "color: var(--jp-ui-font-color1); border-left: 3px solid var(--jp-brand-color1);" +
      "background: var(--jp-layout-color2);";
    outer.insertBefore(note, inner);
  };

  const fixSkipLink = () => {
    document.querySelectorAll("a.skip-link[href='#first-cell']").forEach((link) => {
      link.removeAttribute("tabindex");
      if (link.dataset.courseFixed) return;
      link.dataset.courseFixed = "1";
      link.addEventListener("click", (event) => {
        const cell = document.querySelector(".jp-Notebook .jp-Cell.jp-mod-active") ||
          document.getElementById("first-cell");
        if (!cell) return;
        event.preventDefault();
        cell.focus();
      });
    });
    const first = document.querySelector(".jp-Notebook .jp-Cell[data-windowed-list-index='0']");
    if (first && document.querySelector("a.skip-link[href='#first-cell']") && !first.id) {
      first.id = "first-cell";
    }
  };

  const nameLogo = () => {
    const logo = document.getElementById("jp-NotebookLogo");
    if (logo && !text(logo)) setAttr(logo, "aria-label", "Jupyter: the file browser (new tab)");
  };

  const movePressed = () => {
    document.querySelectorAll("jp-button[aria-pressed]").forEach((host) => {
      const inner = host.shadowRoot && host.shadowRoot.querySelector("button");
      if (inner) inner.setAttribute("aria-pressed", host.getAttribute("aria-pressed"));
      host.removeAttribute("aria-pressed");
    });
  };

  let pending = false;
  const fixAll = () => {
    pending = false;
    addNote();
    document.querySelectorAll(".jp-Notebook .jp-Cell").forEach(nameCell);
    fixSkipLink();
    nameLogo();
    movePressed();
  };
  const schedule = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(fixAll);
    }
  };

  const start = () => {
    new MutationObserver(schedule).observe(document.body, {
      childList: true, subtree: true, attributes: true,
      attributeFilter: ["class", "role", "aria-pressed", "tabindex", "data-windowed-list-index"]});
    window.addEventListener("resize", schedule);
    schedule();
  };
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
