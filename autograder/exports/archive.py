"""The feedback pages in one zip, named for the LMS's bulk feedback upload.

- **Canvas** (Assignment → "Re-Upload Submissions"): a flat zip whose files keep the download's
  prefix ``<name>_<user id>_<attachment id>_``; Canvas takes the first two all-digit parts of a
  file's name as the user and the attachment of that user's submission, and attaches the file
  to the submission as a comment (canvas-lms ``app/models/assignment.rb``,
  ``generate_comments_from_files`` / ``infer_comment_context_from_filename``). A Canvas file
  name without its attachment id (an old or renamed download) cannot be re-uploaded: reported.
- **Moodle** (Assignment → "Upload multiple feedback files in a zip", ``assignfeedback_file``):
  one folder per student named as in the download, ``<Full Name>_<participant id>_
  assignsubmission_file``, the participant id being its second ``_`` part (moodle
  ``mod/assign/feedback/file/importziplib.php``, ``is_valid_filename_for_import``).
- **plain** (any other source): ``<student>/<notebook>-feedback.html``.

Each archive holds the students of its kind only; the others are reported. The members of a
Canvas group share their group's file name (:mod:`autograder.intake.canvas`, group assignments):
the first member's page is written, and Canvas's re-upload gives it to the whole group
(``generate_comments_from_files``: ``group_students``); the others are reported. Every page is the
run's ``feedback/<student>/<notebook>.html``: self-contained HTML that runs no script.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

from autograder.grading.record import Record, as_record

__all__ = ["write_feedback_archive", "SYSTEMS"]

SYSTEMS = ("canvas", "moodle", "plain")


def _member(record: Record, system: str, name: str) -> tuple[str | None, str]:
    lms = record.lms
    if system == "plain":
        return f"{record.student_id}/{name}", ""
    if lms is None or lms.system != system:
        return None, f"not graded from a {system.capitalize()} download"
    if system == "canvas":
        if not lms.attachment_id:
            return None, "its Canvas file name has no attachment id"
        return f"{lms.prefix}{name}", ""
    return f"{lms.prefix}/{name}", ""


def write_feedback_archive(
    records: Sequence[Record | dict],
    run_dir: str | Path,
    notebook_stem: str,
    path: str | Path,
    system: str,
) -> list[str]:
    """Zip every student's feedback page for ``system`` into ``path``; return one line per
    student left out, and why."""
    if system not in SYSTEMS:
        raise ValueError(f"the feedback archive is for one of {', '.join(SYSTEMS)}; got {system!r}")
    skipped: list[str] = []
    written: dict[str, str] = {}  # a zip member's name: the student whose page it is
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for record in map(as_record, records):
            page = Path(run_dir) / "feedback" / record.student_id / f"{notebook_stem}.html"
            member, why = _member(record, system, f"{notebook_stem}-feedback.html")
            if member is None or not page.is_file():
                skipped.append(
                    f"{record.student_id}: left out, "
                    f"{why or 'no feedback page in ' + str(page.parent)}"
                )
                continue
            if member in written:
                skipped.append(
                    f"{record.student_id}: left out, their group's file {member} is there "
                    f"already (as {written[member]}'s), and Canvas gives it to the whole group"
                )
                continue
            written[member] = record.student_id
            archive.writestr(member, page.read_bytes())
    return skipped
