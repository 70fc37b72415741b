"""Submissions in: find each student's notebook, whatever the platform, and when it came.

- :mod:`.collect`: a folder, a zip of a folder, or a platform's download, to one notebook per
  student, and the format it recognised;
- :mod:`.lms`: what a download says about a submission (the student, the platform's ids, the
  time), one type for every platform;
- one module per platform: :mod:`.canvas` and :mod:`.moodle` (read by their names),
  :mod:`.blackboard`, :mod:`.d2l`, :mod:`.gradescope`, :mod:`.nbexchange` (nbgrader's folders)
  and :mod:`.github` (GitHub Classroom's clones), each recognising its download by what it
  holds; a new platform is a module beside them, listed in :data:`.collect.PLATFORMS`;
- :mod:`.late`: the late policy and each submission's penalty.
"""
