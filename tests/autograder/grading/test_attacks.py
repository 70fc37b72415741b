"""A student who attacks the grader: each attack, and an honest control beside it, graded in the
real warm sandbox (problem set 1).

Each attack earns nothing it should not, the control keeps full marks, no attack makes its
submission a fault of the grader (``grader-error`` is the grader's own faults only), and the
grader's memory stays within :data:`MEMORY_BOUND` while it grades one.

Formats read here are their owners': the ``.npz`` file is a zip (PKWARE's APPNOTE.TXT) of
``.npy`` arrays (NumPy's ``numpy/lib/format.py``), as ``numpy.savez`` writes it.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import tempfile
import tracemalloc

import nbformat
import numpy as np
import pytest

from autograder.grading.conceal import visible_cases
from autograder.grading.executors import sandbox_executor
from autograder.grading.pipeline import grade
from autograder.grading.problemset import ProblemSet
from autograder.run.preload import grading_preload
from autograder.sandbox import SandboxConfig, cgroup, sandbox_available, warm
from autograder.status import Status
from tests.environment import require

AVAILABLE, REASON = sandbox_available()
pytestmark = [require(AVAILABLE, f"no sandbox here: {REASON}"), pytest.mark.slow]

PS = "ps1_pca"
#: The grader's own allocations while it grades one submission (tracemalloc's peak, which
#: counts NumPy's arrays): an honest submission needs a few MB; the attack of issue 37 took
#: 1.4 GB.
MEMORY_BOUND = 64 * 2**20

#: The case each attack overwrites: the first one the problem set records, read from its source.
RESULTS = "__import__('os').environ['GRADER_RESULTS_DIR']"


def _first_case(ps: ProblemSet) -> tuple[str, str]:
    """``(case, question's answer cell)`` of the first recorded case, from the source."""
    from autograder.checks.record_calls import record_calls

    call = record_calls(ps.source)[0]
    return call.case, call.function


def _overwrite(case: str, arrays: str) -> str:
    """A cell run after every hidden cell that writes ``case``'s results file itself."""
    return (
        "import numpy as np\n"
        f"np.savez_compressed({RESULTS} + '/{case}.npz', {arrays})\n"
    )


def _answer_cell(ps: ProblemSet, function: str) -> tuple[str, str]:
    """``(grade_id, source)`` of the answer cell that defines ``function``, its reference
    renamed ``_reference`` and nbgrader's solution markers taken out."""
    import re

    for c in ps.source.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in ps.solution_ids and re.search(rf"^def {function}\(", c.source, re.M):
            source = re.sub(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", "", c.source, flags=re.M)
            return gid, re.sub(rf"^def {function}\(", "def _reference(", source, flags=re.M)
    raise AssertionError(f"no answer cell defines {function}")


def _as_student(template: str, function: str, reference: str, visible=()) -> str:
    """An answer cell: the reference renamed, then ``template`` defining ``function`` (and
    ``VISIBLE_CASES``, the cases whose inputs the release publishes)."""
    body = template.replace("{function}", function).replace("{{", "{").replace("}}", "}")
    body = f"VISIBLE_CASES = {list(visible)!r}\n" + body
    return reference + "\n\n" + body


def _submission(ps: ProblemSet, extra: str | None, answers: dict | None = None) -> bytes:
    """The source's reference answers (the honest control), with ``extra`` as a cell of the
    student's at the end, and the answer cells ``{grade_id: source}`` of ``answers``."""
    nb = copy.deepcopy(ps.source)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in (answers or {}):
            cell.source = answers[gid]
    if extra is not None:
        nb.cells.append(nbformat.v4.new_code_cell(extra))
    return nbformat.writes(nb).encode()


ATTACKS = {
    "strings": "out_0=np.full((40, 6), 'abc'), out_1=np.full(6, 'abc')",
    "bytes": "out_0=np.full((40, 6), b'abc'), out_1=np.full(6, b'abc')",
    "void": "out_0=np.zeros((40, 6), 'V8'), out_1=np.zeros(6, 'V8')",
    "records": "out_0=np.zeros((40, 6), [('a', 'f8')]), out_1=np.zeros(6, [('a', 'f8')])",
    "forty_million_bools": "out_0=np.zeros(40_000_000, bool), out_1=np.zeros(6)",
    "extra_member": "out_0=np.zeros((40, 6)), out_1=np.zeros(6), out_2=np.zeros(6)",
    "foreign_name": "payload=np.zeros((40, 6))",
}


#: Issue 37, attack 5: 1,500 nested folders (the grader's clean-up recursed), with a folder
#: nobody may enter, a named pipe and links to the host at the bottom.
NESTED = """\
import os
top = os.getcwd()
for _ in range(1500):
    os.mkdir("d")
    os.chdir("d")
os.mkfifo("pipe")
os.symlink("/etc", "etc")
os.mkdir("locked")
os.mkdir("locked/inner")
os.chmod("locked", 0)
os.chdir(top)
"""

#: Issue 37, attack 8: the graded function raises an exception carrying the hidden lines it
#: finds in IPython's ``In`` and the hidden inputs the grader wrote; so does a cell at the end.
LEAK = """\
def _leak():
    import os
    import numpy as np
    folder = os.path.join(os.environ["GRADER_RESULTS_DIR"], "inputs")
    values = {}
    hidden = [n for n in sorted(os.listdir(folder)) if n[:-len(".npz")] not in VISIBLE_CASES]
    for name in hidden[:3]:
        with np.load(os.path.join(folder, name)) as z:
            values[name] = [z[k].ravel()[:4].tolist() for k in z.files]
    lines = [x for cell in In for x in cell.splitlines() if x.startswith("record(")
             or "HIDDEN" in x or x.startswith("# ")]
    return repr(lines[:3]) + " " + repr(values)


def {function}(*args, **kwargs):
    raise ValueError(_leak())
"""

#: Issue 37, nothing hidden leaves the grader: the same text re-encoded (base64), which no
#: concealment of quoted text can recognise.
LEAK64 = LEAK.replace("raise ValueError(_leak())", "import base64\n"
                      "    raise ValueError(base64.b64encode(_leak().encode()).decode())")

#: Issue 37: a notebook that prints millions of lines.
FLOOD = "for i in range(3_000_000):\n    print(i)"

#: Issue 37, attack 6: the graded function calls a forbidden module through a function whose
#: code object claims NumPy's file, which the guard took for the library's own code.
FORGED = """\
import numpy as np


def _cheat(*args, **kwargs):
    import scipy.linalg  # forbidden by the problem set's rules
    return _reference(*args, **kwargs)


_forged = type(_cheat)(_cheat.__code__.replace(co_filename=np.__file__), globals())


def {function}(*args, **kwargs):
    return _forged(*args, **kwargs)
"""

#: Issue 37, attack 7: no import at all: the loaded classes, walked from
#: ``object.__subclasses__()``, and a method's ``__globals__``.
INTROSPECTED = """\
def _classes():
    seen, stack = set(), [object]
    while stack:
        for sub in type.__subclasses__(stack.pop()):
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return seen


def _reach(name):
    for cls in _classes():
        if str(getattr(cls, "__module__", "")).startswith("scipy"):
            for value in vars(cls).values():
                found = getattr(value, "__globals__", {{}}).get(name)
                if found is not None:
                    return found
    return None


def {function}(*args, **kwargs):
    _reach("eigh")
    return _reference(*args, **kwargs)
"""

#: Printed after the attack: the loaded classes of any module the rules forbid.
REACHED = (
    "print('REACHED', sorted({{str(c.__module__) for c in _classes()\n"
    "    if str(c.__module__).split('.')[0] in {forbid!r}}})[:5])"
)

#: Issue 37, attack 3: 25 files of 60 MB in the working folder (1.5 GB on the host's disk).
FILL = """\
written = 0
for i in range(25):
    try:
        with open("fill_" + str(i) + ".bin", "wb") as f:
            for _ in range(60):
                f.write(b"x" * 2**20)
                written += 2**20
    except OSError as exc:
        print("STOPPED", type(exc).__name__, exc.errno)
        break
print("WRITTEN", written)
"""

#: Issue 37, attack 4: twelve processes of 250 MB each held 3 GB at once under a 2 GB limit
#: (a limit per process).
#: Each child says when it holds its 250 MB; the count is taken once every child holds them or
#: is gone (a busy machine starts twelve interpreters slowly), within the cell's time limit.
MEMORY = """\
import os, subprocess, sys, time
HOLD = ("import os, time; held = b'x' * (250 * 2**20); "
        "open(f'held-{{os.getpid()}}', 'w').close(); time.sleep(60)")
children = [subprocess.Popen([sys.executable, "-c", HOLD]) for _ in range(12)]
def holding(c):
    return os.path.exists(f"held-{{c.pid}}")
deadline = time.monotonic() + 20
while time.monotonic() < deadline and any(c.poll() is None and not holding(c) for c in children):
    time.sleep(0.2)
time.sleep(1)
print("ALIVE", sum(c.poll() is None and holding(c) for c in children))
for c in children:
    c.kill()
    c.wait()
"""

#: A student's function that is right when the grader records it and wrong in its visible test,
#: with the failure silenced: IPython's ``set_custom_exc`` shows no error, so the visible test
#: seemed to pass.
SILENCED = """\
import inspect


def {function}(*args, **kwargs):
    out = _reference(*args, **kwargs)
    if any(frame.function == "record" for frame in inspect.stack()):
        return out
    return out * 2


get_ipython().set_custom_exc((Exception,), lambda *args, **kwargs: [])
"""

#: Issue 37: the graded function returns the reference's answer with one entry replaced by a
#: number of the student's choosing, which encodes what the code read in the sandbox (here how
#: many input files the grader wrote, as the digits after the point). A check's message said
#: "yours is 314159.03": a channel out of the sandbox of about 20 bits per check.
ECHO = """\
def {function}(*args, **kwargs):
    import os
    import numpy as np
    out = _reference(*args, **kwargs)
    first = np.array(out[0] if isinstance(out, tuple) else out, dtype=float)
    folder = os.path.join(os.environ.get("GRADER_RESULTS_DIR", "."), "inputs")
    read = len(os.listdir(folder)) if os.path.isdir(folder) else 0
    first.flat[first.size // 2] = PAYLOAD + read / 100
    return (first,) + tuple(out[1:]) if isinstance(out, tuple) else first
"""
#: Two payloads of the same order of magnitude and their distinctive digits.
PAYLOADS = {"echo": 314159.0, "echo_other": 271828.0}

#: A thread bomb: threads past the limit of processes and threads are refused; the limit that
#: refused them is named.
THREADS = """\
import threading, time
for i in range(3000):
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
"""

#: The first recorded case's results file replaced, after the hidden cells wrote it, by what is
#: not a regular file: a named pipe (opened for reading, it blocks until someone writes), a link
#: to a device that never ends, a link to a host file.
NOT_REGULAR = {
    "results_fifo": "os.mkfifo(path)",
    "results_link_zero": "os.symlink('/dev/zero', path)",
    "results_link_passwd": "os.symlink('/etc/passwd', path)",
}
_REPLACED = (
    "import os\n"
    "path = os.environ['GRADER_RESULTS_DIR'] + '/CASE.npz'\n"
    "os.remove(path)\n"
)

OTHERS = {
    "threads": (THREADS, None),
    "nested_folders": (NESTED, None),
    "memory": (MEMORY, None),
    "disk_fill": (FILL, None),
    "hidden_leak": ("raise RuntimeError(_leak())", LEAK),
    "hidden_leak_base64": (None, LEAK64),
    "flood": (FLOOD, None),
    "forged_file_name": (None, FORGED),
    "introspection": (REACHED, INTROSPECTED),
    "silenced_failure": (None, SILENCED),
} | {name: (None, ECHO.replace("PAYLOAD", repr(value))) for name, value in PAYLOADS.items()}

#: Issue 37: text of the student's choosing carried out in the grader's own notes and messages.
#: Each channel sends ``MARK`` and the hex digits of hidden inputs it reads (``_HEX``), or another
#: choice of its own; ``SHOWN_NOT`` lists what must then appear nowhere the student reads.
MARK = "Q7ZX"
_HEX = (
    "import os, json, numpy as np\n"
    "folder = os.environ['GRADER_RESULTS_DIR']\n"
    "with np.load(folder + '/inputs/' + sorted(os.listdir(folder + '/inputs'))[-1]) as z:\n"
    "    hexed = z[z.files[0]].ravel()[:8].tobytes().hex()\n"
)
CHANNELS = {
    # the guard's log, the kernel's to write: a refusal whose module, entry and line say anything
    "rule_log": (None, """\
def {function}(*args, **kwargs):
""" + "".join("    " + line + "\n" for line in _HEX.splitlines()) + """\
    with open(folder + "/_rules.jsonl", "a") as f:
        f.write(json.dumps(dict(event="refused", module="scipy.{MARK}" + hexed,
                                entry="{MARK}" + hexed, functions=["{function}"],
                                line="{MARK}" + hexed)) + "\\n")
    return _reference(*args, **kwargs)
""".replace("{MARK}", MARK)),
    # what an answer that is not numbers was: the file's text, and the class's name in record's
    "returned_file": (_HEX + "os.remove(folder + '/CASE.npz')\n"
                      "open(folder + '/CASE.error.json', 'w').write(json.dumps(dict(\n"
                      f"    type='TypeError', message='{MARK}' + hexed, returned=True)))\n", None),
    "returned_class": (None, """\
def {function}(*args, **kwargs):
""" + "".join("    " + line + "\n" for line in _HEX.splitlines()) + f"""\
    return type("{MARK}" + hexed, (), {{{{}}}})()
"""),
    # an exception's type, spelled as a path through modules' attributes
    "type_path": ("import os, json\nfolder = os.environ['GRADER_RESULTS_DIR']\n"
                  "os.remove(folder + '/CASE.npz')\n"
                  "open(folder + '/CASE.error.json', 'w').write(json.dumps(dict(message=\n"
                  "    'numpy._core.numeric.np.ma.core.np.linalg.LinAlgError: x')))\n", None),
    # a display message nbformat refuses: its validator's error quotes the data
    "display": (_HEX + "get_ipython().display_pub.publish(\n"
                f"    data=dict(zip(['text/plain'], [dict(k='{MARK}' + hexed)])), metadata=dict())\n",
                None),
    # counts and codes: the links left behind, the exit status
    "counts": ("import os\nfor i in range(1234):\n    os.symlink('/etc', 'l' + str(i))\n"
               "os._exit(173)\n", None),
    # a class of the student's named as the guard's refusal, naming an allowed package
    "forbidden_name": ("class ForbiddenModule(Exception):\n    pass\n\n\n"
                       "raise ForbiddenModule('zipfile is not allowed')\n", None),
    # a class of the student's named as the guard's refusal of forged code, with a message
    "forged_name": ("class ForgedCode(PermissionError):\n    pass\n\n\n"
                    "raise ForgedCode('zipfile claimed the file numpy')\n", None),
} | {name: (_REPLACED + how + "\n", None) for name, how in NOT_REGULAR.items()}
SHOWN_NOT = {
    "type_path": ["ma.core"],
    "counts": ["1234", "173", "signal 45", "running cell"],
    "forbidden_name": ["zipfile"],
    "forged_name": ["zipfile", "claimed the file numpy"],
}


def _with_cell(cell: dict):
    """An edit of the notebook's file: ``cell`` appended, as JSON (so as the student wrote
    it, not as nbformat would)."""

    def edit(data: bytes) -> bytes:
        nb = json.loads(data)
        nb["cells"].append(cell)
        return json.dumps(nb).encode()

    return edit


#: Submissions edited as files. A lone UTF-16 surrogate, which JSON may escape (``\\ud800``,
#: RFC 8259 section 8.2: "the ABNF in this specification allows member names and string values
#: to contain bit sequences that cannot encode Unicode characters"): UTF-8 cannot encode it, and
#: the grader raised where the kernel's message and the notebook's copies are written.
EDITED = {
    "lone_surrogate_text": _with_cell({"cell_type": "markdown", "id": "lone-text", "metadata": {},
                                       "source": "x \ud800 y"}),
    "lone_surrogate_code": _with_cell(
        {"cell_type": "code", "id": "lone-code", "metadata": {},
         "source": "s = 'x \udc80 y'  # \ud800",
         "outputs": [], "execution_count": None}
    ),
}


@pytest.fixture(scope="module")
def graded():
    """The control and every attack, each graded once in the warm sandbox, with the grader's
    peak allocation while grading it; and every folder the grader made for them."""
    return grade_attacks()


def grade_attacks(only: frozenset[str] | None = None):
    """``(problem set, first case, {name: (grading, peak)}, folders made and warnings)`` for
    the control and every attack (or those named in ``only``)."""
    ps = ProblemSet(PS)
    case, _ = _first_case(ps)
    # As the grader's workers do (autograder.run.task): the zygote preloads the course's imports
    # but the modules this problem set's rules forbid.
    forbid = ps.rules.every_forbidden()
    executor = sandbox_executor(SandboxConfig(preload=grading_preload(ps.course.root, forbid)))
    _, function = _first_case(ps)
    sources = {"control": (None, None)} | {
        k: (_overwrite(case, v), None) for k, v in ATTACKS.items()
    }
    cell, reference = _answer_cell(ps, function)
    sources |= {
        k: (
            extra and extra.format(forbid=[f.split(".")[0] for f in forbid]),
            answer and {cell: _as_student(answer, function, reference, sorted(visible_cases(ps)))},
        )
        for k, (extra, answer) in OTHERS.items()
    }
    sources |= {
        k: (
            extra and extra.replace("CASE", case),
            answer and {cell: _as_student(answer, function, reference, sorted(visible_cases(ps)))},
        )
        for k, (extra, answer) in CHANNELS.items()
    }
    out = {}
    made: list[str] = []
    mkdtemp = tempfile.mkdtemp

    def noted(*args, **kwargs):
        made.append(mkdtemp(*args, **kwargs))
        return made[-1]

    warnings: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logging.getLogger("autograder.sandbox").addHandler(handler)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tempfile, "mkdtemp", noted)
            submissions = {k: _submission(ps, *v) for k, v in sources.items()}
            submissions |= {k: edit(submissions["control"]) for k, edit in EDITED.items()}
            submissions = {k: v for k, v in submissions.items() if only is None or k in only}
            for name, data in submissions.items():
                tracemalloc.start()
                try:
                    g = grade(ps, data, executor)
                    peak = tracemalloc.get_traced_memory()[1]
                finally:
                    tracemalloc.stop()
                out[name] = (g, peak)
    finally:
        logging.getLogger("autograder.sandbox").removeHandler(handler)
        warm.stop_zygote()
    return ps, case, out, made + [f"warning: {w}" for w in warnings]


def _full(ps: ProblemSet) -> float:
    return float(sum(c.points for c in ps.grade_cells if c.autograded))


def _cells_reading(ps: ProblemSet, case: str) -> set[str]:
    from autograder.grading.recorded import cell_cases

    return {gid for gid, cases in cell_cases(ps).items() if case in cases}


def test_the_control_keeps_full_marks(graded):
    ps, _, out, _ = graded
    g, peak = out["control"]
    assert g.status == Status.GRADED or g.status == Status.AWAITING_MANUAL, g.fault
    assert g.total == _full(ps)
    assert peak < MEMORY_BOUND


@pytest.mark.parametrize("edited", sorted(EDITED))
def test_a_lone_surrogate_is_graded_as_the_same_notebook(graded, edited):
    """A lone surrogate in the notebook's text (a markdown cell; a code cell's string and
    comment) made the grader raise on every run: the submission is graded, with the control's
    points, and its copies are written."""
    ps, _, out, _ = graded
    g, _ = out[edited]
    assert g.status == out["control"][0].status and g.grader_error is None, g.grader_error
    assert g.total == _full(ps)
    assert g.copies is not None and all(g.copies.values())


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_forged_results_file_is_a_wrong_answer_never_a_grader_fault(graded, attack):
    """Issue 37, attacks 1 and 2: strings, bytes, void or record arrays, a 39 KB file that
    expands to 40 million booleans, a member too many or a foreign member: the cells reading
    the case score 0 with a message; every other cell keeps its points; the grader's memory
    stays bounded."""
    ps, case, out, _ = graded
    g, peak = out[attack]
    assert g.status != Status.GRADER_ERROR and g.grader_error is None, g.grader_error
    reading = _cells_reading(ps, case)
    assert reading
    control = {s.grade_id: s.points for s in out["control"][0].scores}
    for s in g.scores:
        if s.grade_id in reading:
            assert s.points == 0.0, (s.grade_id, s.message)
            assert "could not be read back" in s.message, s.message
        else:
            assert s.points == control[s.grade_id], (s.grade_id, s.message)
    assert peak < MEMORY_BOUND, f"{peak / 2**20:.0f} MB"


def test_the_bomb_is_small_on_disk():
    """The 40-million-boolean answer is a file of tens of kilobytes, as the issue says: the
    bound above is on what it would expand to, not on what it weighs."""
    import io

    import numpy as np

    buffer = io.BytesIO()
    np.savez_compressed(buffer, out_0=np.zeros(40_000_000, bool), out_1=np.zeros(6))
    assert len(buffer.getvalue()) < 100_000


def test_nested_folders_are_cleaned_up_and_cost_nothing(graded):
    """Issue 37, attack 5: the submission keeps the control's marks, is no fault of the
    grader, and the run names the folder cut below the depth the grader walks."""
    ps, _, out, _ = graded
    g, _ = out["nested_folders"]
    assert g.status != Status.GRADER_ERROR and g.grader_error is None, g.grader_error
    assert [(s.grade_id, s.points) for s in g.scores] == \
        [(s.grade_id, s.points) for s in out["control"][0].scores]
    from autograder.sandbox.workdir import MAX_DEPTH

    assert [r.count("/") for r in g.run.removed_files] == [MAX_DEPTH], g.run.removed_files


def test_no_folder_the_grader_made_is_left(graded):
    """Every scratch folder made while grading the attacks (the submission's, the sandbox's,
    under /tmp) is gone."""
    *_, made = graded
    assert any("/grade-" in m for m in made) and any("/nbsbx-" in m for m in made), made
    assert [m for m in made if os.path.lexists(m)] == []
    groups = list(cgroup.ROOT.glob(f"*/grader-{os.getpid()}-*")) + list(
        cgroup.ROOT.glob(f"grader-{os.getpid()}-*"))
    assert groups == []


def test_every_submission_ran_warm_and_the_sandbox_said_nothing_amiss(graded):
    """The capped folders (tmpfs mounts under /tmp) leave the warm zygote working: no fall
    back to a cold sandbox, no clean-up or mount that failed."""
    *_, made = graded
    # The "display" channel's message, which nbclient cannot take, is the student's doing: the
    # sandbox logs it for the instructor, with the text it no longer shows the student.
    expected = "warning: execution stopped by an unexpected error"
    assert [m for m in made if m.startswith("warning: ") and m != expected] == []


def _hidden_lines(ps: ProblemSet) -> list[str]:
    """The lines between nbgrader's hidden-test markers in the source (its
    ``ClearHiddenTests``: ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS``)."""
    out, inside = [], False
    for cell in ps.source.cells:
        for line in cell.source.splitlines():
            if "BEGIN HIDDEN TESTS" in line:
                inside = True
            elif "END HIDDEN TESTS" in line:
                inside = False
            elif inside and len(line.strip()) >= 8:
                out.append(line.strip())
    return out


def test_the_feedback_shows_no_hidden_line_and_no_hidden_input(graded):
    """Issue 37, attack 8: the student's exception text carries hidden lines and hidden inputs'
    values (as the student's code printed them); the feedback page shows none of them, and
    still says which function raised what."""
    from autograder.checks.declared import case_inputs, declared_cases
    from autograder.grading.conceal import MIN_DIGITS
    from autograder.grading.pipeline import to_record
    from autograder.pages.feedback import feedback_html

    ps, case, out, _ = graded
    g, _ = out["hidden_leak"]
    assert g.status != Status.GRADER_ERROR, g.grader_error
    page = feedback_html(to_record(g, "student", 0.0, 0.0))
    raised = [s.message for s in g.scores if "raised ValueError" in s.message]
    assert raised and any("RuntimeError" in n for n in g.notes), (raised, g.notes)
    shown = [x for x in _hidden_lines(ps) if x in page] + [
        m for m in ("record(", "inputs(", "HIDDEN TESTS") if m in page
    ]
    assert shown == [], shown
    cases = declared_cases(ps.source)
    hidden = [name for name in sorted(cases) if name not in visible_cases(ps)]
    values = [repr(float(v)) for name in hidden[:3]
              for v in np.ravel(list(case_inputs(cases, name).values())[0])[:4]]
    # A number of fewer than MIN_DIGITS significant digits (0.0, 5.0, 13.0) is never taken for an
    # input: it cannot be told apart from any other (autograder.grading.conceal).
    telling = [v for v in values if len(v.lstrip("-").replace(".", "").strip("0")) >= MIN_DIGITS]
    assert telling and [v for v in telling if v in page] == []


def test_an_output_flood_is_cut_and_said_and_costs_nothing(graded):
    """Issue 37: millions of printed lines keep the control's marks; the stored output stays
    within the sandbox's limit and a note tells the student their output was cut."""
    ps, _, out, _ = graded
    g, peak = out["flood"]
    assert [(s.grade_id, s.points) for s in g.scores] == \
        [(s.grade_id, s.points) for s in out["control"][0].scores]
    limit = SandboxConfig().max_output_bytes
    printed = sum(len(o.get("text", "")) for c in g.run.notebook.cells if c.cell_type == "code"
                  for o in c.outputs)
    assert printed <= limit + 1000
    assert [n for n in g.notes if f"more than {limit:,} characters" in n], g.notes
    assert peak < MEMORY_BOUND, f"{peak / 2**20:.0f} MB"


def _cells_of(ps: ProblemSet, function: str) -> set[str]:
    from autograder.checks.record_calls import cases_by_function

    cases = set(cases_by_function(ps.source)[function])
    return {gid for gid, read in _cell_cases(ps).items() if cases & set(read)}


def _cell_cases(ps):
    from autograder.grading.recorded import cell_cases

    return cell_cases(ps)


def test_a_forged_file_name_earns_nothing_and_is_flagged(graded):
    """Issue 37, attack 6: a function whose code object claims NumPy's file imported SciPy and
    kept 20/20. Now the kernel refuses to make the forged code: the function is never defined,
    so its cells score 0 (and those of the functions that call it), none scores above the
    control, and a person is told."""
    ps, case, out, _ = graded
    g, _ = out["forged_file_name"]
    _, function = _first_case(ps)
    control = {s.grade_id: s.points for s in out["control"][0].scores}
    zero = _cells_of(ps, function)
    assert zero
    for s in g.scores:
        assert s.points == 0.0 if s.grade_id in zero else (s.points or 0) <= (control[s.grade_id] or 0), s
    assert g.total < out["control"][0].total
    assert [f for f in g.flags if "tampering" in f and "claimed the file" in f], g.flags


def test_introspection_is_flagged_for_a_person(graded):
    """Issue 37, attack 7: reaching a loaded module with no import (``object.__subclasses__``,
    a method's ``__globals__``) is flagged, naming the route."""
    _, _, out, _ = graded
    g, _ = out["introspection"]
    flagged = " ".join(g.flags)
    assert "__subclasses__" in flagged and "__globals__" in flagged, g.flags


def test_introspection_finds_no_forbidden_module_loaded(graded):
    """Issue 37, attack 7: every kernel was forked from a zygote with SciPy and scikit-learn
    loaded, so ``object.__subclasses__()`` led to ``scipy.linalg.eigh``. A problem set that
    forbids them gets a zygote that does not load them: the walk finds nothing."""
    ps, _, out, _ = graded
    g, _ = out["introspection"]
    printed = "".join(o.get("text", "") for c in g.run.notebook.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "REACHED []" in printed, printed[-2000:]


@require(os.geteuid() == 0, "capping the working folder needs a root grader")
def test_the_working_folder_is_capped_and_the_limit_named(graded):
    """Issue 37, attack 3: 1,500 MB written into the working folder all reached the host's disk.
    Now the folder is a tmpfs of ``settings.WORK_MB``: the writes past it fail (ENOSPC), the
    control's marks are kept, and a note names the limit."""
    import errno

    from autograder import settings

    _, _, out, _ = graded
    g, _ = out["disk_fill"]
    assert [(s.grade_id, s.points) for s in g.scores] == \
        [(s.grade_id, s.points) for s in out["control"][0].scores]
    printed = "".join(o.get("text", "") for c in g.run.notebook.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert f"STOPPED OSError {errno.ENOSPC}" in printed, printed[-500:]
    written = int(printed.split("WRITTEN ")[-1].split()[0])
    assert written <= settings.WORK_MB * 2**20
    assert [n for n in g.notes if f"{settings.WORK_MB} MB" in n], g.notes


@require(cgroup.available()[0] is not None, f"no control groups: {cgroup.available()[1]}")
def test_memory_is_limited_for_the_whole_submission(graded):
    """Issue 37, attack 4: twelve processes of 250 MB held 3 GB at once under a limit of 2 GB.
    Now all the submission's processes share the limit (its control group): fewer than the
    limit's worth stay alive, the control's marks are kept, and a note names the limit."""
    _, _, out, _ = graded
    g, _ = out["memory"]
    limit = SandboxConfig().memory_mb
    assert [(s.grade_id, s.points) for s in g.scores] == \
        [(s.grade_id, s.points) for s in out["control"][0].scores]
    printed = "".join(o.get("text", "") for c in g.run.notebook.cells if c.cell_type == "code"
                      for o in c.outputs)
    alive = int(printed.split("ALIVE ")[-1].split()[0])
    assert alive * 250 < limit, printed[-300:]
    assert [n for n in g.notes if f"memory limit of {limit:,} MB" in n], g.notes


def test_a_silenced_failure_of_a_visible_test_still_fails_it(graded):
    """A function wrong only outside ``record``, its visible test's exception silenced with
    ``set_custom_exc``: the kernel's reply still says the cell raised, so the visible cell scores
    0, with the reason, and the run is no grader fault."""
    ps, _, out, _ = graded
    g, _ = out["silenced_failure"]
    _, function = _first_case(ps)
    visible = [s for s in g.scores if s.grade_id in _cells_of(ps, function)
               and s.grade_id.endswith("_visible")]
    assert visible and all(s.points == 0 for s in visible), visible
    assert g.status != Status.GRADER_ERROR and g.total < _full(ps)


def _decoded(text: str) -> str:
    """``text`` and every run of base64 in it (16 characters or more), decoded."""
    import base64
    import binascii
    import re

    out = [text]
    for run in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", text):
        try:
            out.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode(errors="replace"))
        except (binascii.Error, ValueError):
            pass
    return "\n".join(out)


def test_a_hidden_tests_exception_shows_its_type_never_its_message(graded):
    """Issue 37: the student's function raises a ValueError whose message is the cell's source
    as the grader runs it and the cases' input files, base64-encoded. In the grader even the
    visible cell runs beside the hidden tests (its record lines inserted, every case's inputs
    written), so the feedback page and Gradescope's results.json say the function raised a
    ValueError and never show its message, encoded or decoded."""
    from autograder.exports.gradescope import results_json
    from autograder.grading.conceal import NOT_SHOWN
    from autograder.grading.pipeline import to_record
    from autograder.pages.feedback import feedback_html

    ps, _, out, _ = graded
    g, _ = out["hidden_leak_base64"]
    assert g.status != Status.GRADER_ERROR, g.grader_error
    record = to_record(g, "student", 0.0, 0.0)
    texts = {"page": feedback_html(record), "results.json": json.dumps(results_json(record))}
    hidden = [s for s in g.scores if s.grade_id.endswith("_hidden") and s.points is not None]
    raised = [s.message for s in hidden if "raised ValueError" in s.message]
    assert raised and all(NOT_SHOWN in m for m in raised), [s.message for s in hidden]
    for where, text in texts.items():
        seen = _decoded(text)
        shown = [x for x in _hidden_lines(ps) if x in seen] + [
            m for m in ("record(", "inputs(", "HIDDEN TESTS", ".npz") if m in seen
        ]
        assert shown == [], (where, shown)


def test_an_exception_keeps_its_type_and_line_and_loses_its_message():
    """The concealment's rule, stated: an exception the grader reports keeps its type and line,
    never its message."""
    from autograder.grading.conceal import NOT_SHOWN, without_error_messages

    text = "case 1: your function raised ValueError: aGlkZGVu\nmore: cmVjb3JkKA=="
    assert without_error_messages(text) == "case 1: your function raised ValueError" + NOT_SHOWN
    note = "Test 'pca_hidden' raised KeyError at line 3: secret"
    assert without_error_messages(note) == "Test 'pca_hidden' raised KeyError at line 3" + NOT_SHOWN
    assert without_error_messages("passed") == "passed"


def test_an_exception_class_the_code_defined_is_not_named():
    """Issue 37: the name of a class the student's code defined is free text (``class
    aGlkZGVu(Exception)``), and so is an error text written without the colon: the type is
    named only when it is Python's or a library's, looked up in the grader; any text after it
    is cut."""
    from autograder.grading.conceal import NOT_SHOWN, OWN_CLASS, without_error_messages

    kept = {"ValueError", "numpy.linalg.LinAlgError", "ZeroDivisionError"}
    for name in kept:
        assert without_error_messages(f"case 1: raised {name}") == f"case 1: raised {name}"
    for name in ("aGlkZGVu", "numpy.aGlkZGVu", "os.path.aGlk", "__main__.Secret", "print"):
        assert without_error_messages(f"case 1: your function raised {name}") == (
            f"case 1: your function raised {OWN_CLASS}"), name
    forged = "Test 'x' raised ValueError at line 2 aGlkZGVu cmVjb3Jk"
    assert without_error_messages(forged) == "Test 'x' raised ValueError at line 2" + NOT_SHOWN


def test_the_kernels_words_reach_the_feedback_only_as_the_graders():
    """Issue 37: a cell's error name and text are the kernel's report, which the student's code
    writes (``raise type("CellTimeoutError", (Exception,), {})(secret)``): the time limit, a
    forbidden import and a blocked package are stated in the grader's words, naming at most a
    package that exists."""
    from autograder.grading.diagnose import _describe

    secret = "aGlkZGVuIHRlc3Rz"
    for name, value in [("CellTimeoutError", secret), ("ForbiddenModule", secret),
                        ("ForbiddenModule", f"sklearn.{secret} is forbidden"),
                        ("ImportError", f"not available in the sandbox {secret}")]:
        assert secret not in _describe(name, value), (name, value)
    assert "it imports sklearn," in _describe("ForbiddenModule", "sklearn.decomposition x")


def test_a_checks_message_carries_no_value_of_the_students_choosing(graded):
    """Issue 37: a check's "yours is ..." echoed six or more digits of whatever the student's
    function returned, so the code could read something in the sandbox (a file, a hidden input)
    and send it out in its answer. Now the grader's checks state the student's values by a few
    classes only (:func:`coursedata.compare.bounded`): the payload's digits appear nowhere in the
    feedback of the cells reading the function's answers, visible or hidden, nor on the page, and
    two different payloads of one order of magnitude give the same messages, word for word. The
    cells still say which quantity is wrong, and score nothing."""
    from autograder.grading.pipeline import to_record
    from autograder.pages.feedback import feedback_html

    ps, _, out, _ = graded
    _, function = _first_case(ps)
    cells = _cells_of(ps, function)
    assert any(gid.endswith("_hidden") for gid in cells), cells
    messages = {}
    for name, payload in PAYLOADS.items():
        g, _ = out[name]
        assert g.status != Status.GRADER_ERROR, g.grader_error
        hidden = {s.grade_id: s.message for s in g.scores if s.grade_id in cells}
        assert all(s.points < s.max_points for s in g.scores if s.grade_id in cells), hidden
        digits = f"{payload:.0f}"[:4]
        assert [m for m in hidden.values() if digits in m] == [], hidden
        page = feedback_html(to_record(g, "student", 0.0, 0.0))
        assert digits not in page
        messages[name] = hidden
    assert messages["echo"] == messages["echo_other"]
    assert all("wrong" in m or "should" in m for m in messages["echo"].values()), messages


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_no_text_of_the_students_choosing_reaches_the_feedback(graded, channel):
    """Issue 37: the guard's log, an answer that is not numbers (the file's text, the returned
    class's name), an exception's type spelled through modules' attributes, a display message
    the notebook format refuses, the links left and the exit status, a refusal the student's own
    class states: each quoted text or a number of the student's choosing. None reaches a score's
    message, a note or the feedback page, and no submission is the grader's fault."""
    from autograder.grading.pipeline import to_record
    from autograder.pages.feedback import feedback_html

    _, _, out, _ = graded
    g, _ = out[channel]
    assert g.status != Status.GRADER_ERROR and g.grader_error is None, g.grader_error
    shown = [s.message for s in g.scores] + g.notes
    page = feedback_html(to_record(g, "student", 0.0, 0.0))
    for text in [MARK, *SHOWN_NOT.get(channel, [])]:
        assert not [m for m in shown if text in m], (text, shown)
        assert text not in page, text


@require(cgroup.available()[0] is not None, f"no control groups: {cgroup.available()[1]}")
def test_reaching_the_process_limit_is_named(graded):
    """A thread bomb: the threads past the limit were refused by ``RLIMIT_NPROC`` before the
    control group counted them, so the feedback said only that a cell raised RuntimeError. The
    control group's limit binds (``RLIMIT_NPROC`` stands above it): the control's marks are kept
    and a note names the limit."""
    _, _, out, _ = graded
    g, _ = out["threads"]
    limit = SandboxConfig().max_processes
    assert [(s.grade_id, s.points) for s in g.scores] == \
        [(s.grade_id, s.points) for s in out["control"][0].scores]
    assert [n for n in g.notes if f"limit of {limit} processes and threads" in n], g.notes


def test_a_guard_refusal_is_named_in_the_graders_words(graded):
    """A function whose code object claims NumPy's file: the kernel's guard refuses to make it
    (``ForgedCode``), and the feedback said the cell "raised an exception of a class the code
    defined". It says the problem set's rules refused it, and the guard's log, for a person,
    says whose code claimed which file."""
    from autograder.grading.conceal import OWN_CLASS

    ps, _, out, _ = graded
    g, _ = out["forged_file_name"]
    _, function = _first_case(ps)
    shown = g.notes + [s.message for s in g.scores if s.grade_id in _cells_of(ps, function)]
    assert [m for m in shown if "refused by the problem set's rules" in m], shown
    assert not [m for m in shown if OWN_CLASS in m], shown
    assert [f for f in g.flags if "the student's code claimed the file" in f], g.flags


def test_a_guard_refusal_is_stated_without_its_message():
    """The guard's refusals are the kernel's report, which the student's code can raise itself
    with any message: each is stated in the grader's words, its message never shown."""
    from autograder.grading.diagnose import _describe

    secret = "aGlkZGVuIHRlc3Rz"
    for name in ("ForgedCode", "coursedata.guard.ForgedCode"):
        said = _describe(name, f"{secret} claimed the file x: code may not pretend")
        assert secret not in said and "refused by the problem set's rules" in said, said


@pytest.mark.parametrize("replaced", sorted(NOT_REGULAR))
def test_a_results_file_that_is_not_a_regular_file_is_named(graded, replaced):
    """The first recorded case's results file replaced by a named pipe, or a link to
    ``/dev/zero`` or to ``/etc/passwd``: the feedback said the function was not run. The cells
    reading the case score 0 saying the result could not be read back, as it is not a regular
    file; every other cell keeps its points, and the grading ends (a pipe is never opened)."""
    ps, case, out, _ = graded
    g, _ = out[replaced]
    assert g.status != Status.GRADER_ERROR and g.grader_error is None, g.grader_error
    reading = _cells_reading(ps, case)
    control = {s.grade_id: s.points for s in out["control"][0].scores}
    for s in g.scores:
        if s.grade_id in reading:
            assert s.points == 0.0, (s.grade_id, s.message)
            assert "could not be read back" in s.message, s.message
            assert "not a regular file" in s.message, s.message
        else:
            assert s.points == control[s.grade_id], (s.grade_id, s.message)
