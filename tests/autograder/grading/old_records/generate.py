"""Write the submissions of ``README.md``'s class, its course and late policy into ``RUN``.

Run from a checkout of the grader whose records are wanted (its ``tests`` and ``autograder``
are imported from the current directory): ``python PATH/TO/generate.py RUN``; then
``python -m autograder grade`` grades them (see ``README.md``).
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, os.getcwd())

from autograder.grading.problemset import ProblemSet  # noqa: E402
from tests import submissions as sb  # noqa: E402
from tests.psharness import generate_release  # noqa: E402

PS, NB = "ps1_pca", "ps1_pca.ipynb"
DEADLINE = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)


def main(base: Path) -> None:
    (base / "course").mkdir(parents=True, exist_ok=True)
    release = generate_release([PS], base / "course")
    builder = sb.Builder(ProblemSet(PS).path, release / PS / NB)
    notebooks = {
        "correct": builder.correct(),
        "wrong": builder.wrong(),
        "loop": sb.insert_after(builder.correct(), "numerics", sb.STUCK_LOOP),
        "exit-late": sb.insert_after(builder.correct(), "project_hidden",
                                     "import os\nos._exit(0)"),
        "broken-check": builder.correct(),  # graded with a broken check: a grader-error
    }
    subs = base / "submissions"
    for student, nb in notebooks.items():
        (subs / student).mkdir(parents=True, exist_ok=True)
        (subs / student / NB).write_bytes(sb.to_bytes(nb))
    (subs / "notes-only").mkdir(exist_ok=True)
    (subs / "notes-only" / "notes.txt").write_text("I forgot the notebook\n")
    (subs / "empty-file").mkdir(exist_ok=True)
    (subs / "empty-file" / NB).write_bytes(b"")
    (base / "late.toml").write_text(f"[{PS}]\ndeadline = {DEADLINE.isoformat()}\n"
                                    f"percent_per_day = 10\n")
    on_time, late = DEADLINE.timestamp() - 3600, DEADLINE.timestamp() + 2 * 86400
    for path in subs.rglob("*"):
        if path.is_file():
            os.utime(path, (on_time, on_time))
    os.utime(subs / "wrong" / NB, (late, late))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
