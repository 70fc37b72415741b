"""Every page the grader writes, and what they show.

- :mod:`.style`: the pages' shared style, Content-Security-Policy and titles;
- :mod:`.feedback`: a student's feedback page and the marking scheme;
- :mod:`.visibility`: what the feedback shows of the hidden checks (full, pass/fail, nothing yet);
- :mod:`.report`: the class report, for the instructor;
- :mod:`.similarity`: the similarity page (which students' code is alike).
"""
