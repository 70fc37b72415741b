"""The course's grader: nbgrader problem sets, graded in a sandbox, back to students and the LMS.

One folder per stage a submission goes through; each folder's ``__init__`` lists its modules::

    authoring/    before students: new problem set, static checks, self-check, release
        |
        v
    intake/       submissions in: a folder, a zip, a platform's download (one module each), lateness
        |
        v
    run/          a class: batch, schedule, pool/cluster, the one writer of the output folder
        |
        v
    grading/      one submission: the pipeline's steps, in order, to its Record
        |   runs the student's code in    sandbox/   (knows nothing of the course)
        |   scores each cell with         checks/    (the check engine: declared and Python)
        v
    pages/        every page the grader writes: feedback, marking scheme, report, similarity
    grades/       the grade arithmetic: one student's grade, grades.csv
    exports/      grades and feedback back into the LMS (Canvas, Moodle, Gradescope, Blackboard)
    gradebook/    nbgrader's side: its gradebook, the formgrader, the term

    commands/     ``python -m autograder SUBCOMMAND``: argument parsing and exit codes only
    course.py, settings.py, status.py      shared by every stage (and the kit's coursedata.naming)

An arrow is an import allowed one way only (``tests/test_layout.py`` holds the rules). The
course's own code (its input generators and Python checks, the honest answers the tests grade) is
not here: it lives in the course folder beside its notebooks and rubrics (``course/checks/``,
``course/honest/``; :mod:`autograder.course`), so a problem set is added, changed or removed
there alone.

Student code only ever runs through :func:`autograder.sandbox.execute_notebook`, which keeps it
away from the reference package :mod:`solutions`, the course sources and the gradebook.
"""
