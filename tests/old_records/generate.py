"""Grade a small real class with the code of the current directory (a snapshot of main)."""
import os, sys, subprocess, shutil, json
from datetime import datetime, timezone
from pathlib import Path
sys.path.insert(0, os.getcwd())
import autograder
print("autograder from", autograder.__file__)
from tests import submissions as sb
from tests.psharness import generate_release
from autograder.problemset import ProblemSet

base = Path(sys.argv[1]); base.mkdir(parents=True, exist_ok=True)
PS, NB = "ps1_pca", "ps1_pca.ipynb"
rel = base / "course"; rel.mkdir(exist_ok=True)
release = generate_release([PS], rel)
b = sb.Builder(ProblemSet(PS).path, release / PS / NB)
subs = base / "submissions"
nbs = {"correct": b.correct(), "wrong": b.wrong(),
       "loop": sb.insert_after(b.correct(), "numerics", sb.STUCK_LOOP),
       "exit-late": sb.insert_after(b.correct(), "project_hidden", "import os\nos._exit(0)"),
       "broken-check": b.correct()}
for student, nb in nbs.items():
    (subs / student).mkdir(parents=True, exist_ok=True)
    (subs / student / NB).write_bytes(sb.to_bytes(nb))
(subs / "notes-only").mkdir(exist_ok=True)
(subs / "notes-only" / "notes.txt").write_text("I forgot the notebook\n")
(subs / "empty-file").mkdir(exist_ok=True)
(subs / "empty-file" / NB).write_bytes(b"")
deadline = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)
(base / "late.toml").write_text(f"[{PS}]\ndeadline = {deadline.isoformat()}\npercent_per_day = 10\n")
on_time, late = deadline.timestamp() - 3600, deadline.timestamp() + 2 * 86400
for p in subs.rglob("*"):
    if p.is_file():
        os.utime(p, (on_time, on_time))
os.utime(subs / "wrong" / NB, (late, late))
