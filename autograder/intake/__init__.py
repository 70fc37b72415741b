"""Submissions in: find each student's notebook, whatever the LMS, and when it came.

- :mod:`.collect`: a folder, a zip of a folder, or an LMS download, to one notebook per student;
- :mod:`.lms`: what an LMS download's names say (the student, the LMS's ids), one pattern per LMS
  (:mod:`.canvas`, :mod:`.moodle`); a new LMS is a new module beside them;
- :mod:`.late`: the late policy and each submission's penalty.
"""
