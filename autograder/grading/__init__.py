"""Grade one submission: the pipeline's steps, from the submitted bytes to its record.

- :mod:`.pipeline`: the steps, in order (the place to add or change one);
- :mod:`.problemset`: the source notebook, its graded cells, and the submission put back together;
- :mod:`.executors`: where the rebuilt notebook runs (the sandbox, or a plain kernel);
- :mod:`.scoring`: each graded cell's score from its recorded answers and its trusted check
  (:mod:`autograder.checks`);
- :mod:`.rulebook`: whether the submission kept its problem set's rules;
- :mod:`.diagnose`: why answers went missing, said once;
- :mod:`.recorded`: a short signature of what each hidden part recorded;
- :mod:`.similarity`: the fingerprints of the code a student wrote;
- :mod:`.quoted`: written answers stating another student's numbers (per-student variants);
- :mod:`.sanitize`: the formgrader's copies, made safe to open;
- :mod:`.record`: the record of one graded submission, the one type every later stage reads.
"""
