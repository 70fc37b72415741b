"""The grader's settings and defaults, in one place.

The command lines (:mod:`autograder.commands`), the grading options (:class:`autograder.run.task.
GradingOptions`) and the sandbox (:class:`autograder.sandbox.SandboxConfig`) all start from these.

The nbgrader course (source notebooks, rubrics, the released notebooks, the gradebook and the
``submitted``/``autograded`` folders) lives apart from this package, in :data:`COURSE_DIR`: the
repository's ``course/`` folder unless the environment variable ``AUTOGRADER_COURSE`` names
another. It and the project root (:data:`ROOT`, the checkout holding this package, the reference
and the course data) are :mod:`coursesite`'s, which the book reads too.
"""

#: Wall time of one cell, in seconds; the cell is then interrupted and fails, later cells run.
#: The kit's, so that the student's check (``python -m coursedata.check``) stops the same cells.
from coursedata.grading import CELL_TIMEOUT_S as CELL_TIMEOUT_S  # noqa: E402
from coursesite import COURSE_DIR as COURSE_DIR  # re-exported: the grader's settings hold both
from coursesite import ROOT as ROOT

#: A notebook's wall time, as a multiple of the time per cell.
NOTEBOOK_CELLS = 10
#: Wall time of all cells of a notebook together, in seconds.
NOTEBOOK_TIMEOUT_S = NOTEBOOK_CELLS * CELL_TIMEOUT_S
#: Address space of each process of a kernel, in MB: the kit's, which the student's check uses too.
from coursedata.grading import MEMORY_MB as MEMORY_MB  # noqa: E402

#: What a submission may write in its working folder (a size-capped tmpfs where the grader is
#: root: :mod:`autograder.sandbox.disk`), in MB and in files and folders.
WORK_MB = 256
WORK_INODES = 20_000
