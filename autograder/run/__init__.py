"""Grade a class: every submission of a problem set, in parallel, into one output folder.

- :mod:`.batch`: :func:`~autograder.run.batch.grade_class`, from submissions to the output folder;
- :mod:`.task`: one grading task (the options, the grader's fingerprint, ``grade_task``), the unit
  every backend runs;
- :mod:`.schedule`: the coordinator's loop (deadlines, a dead worker's tasks run again);
- :mod:`.pool` and :mod:`.cluster`: the backends, a local process pool and a Dask cluster;
- :mod:`.preload`: what the course's grading kernels import before the first submission;
- :mod:`.output`: the one writer of the output folder (records, pages, ``grades.csv``);
- :mod:`.regrade`: the diff of a regrade, per student;
- :mod:`.gradescope`: Gradescope's ``autograder.zip``, and the grading of its one submission
  inside Gradescope's container (the same pipeline, one student).

One submission's grading is :mod:`autograder.grading`; the submissions come from
:mod:`autograder.intake`.
"""
