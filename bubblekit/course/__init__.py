"""Course material: what the lessons need beyond the library (layer 4 of bubblekit).

* :mod:`~bubblekit.course.checks` holds the exercises' self-checks (``check("03.2", answer)``);
* :mod:`~bubblekit.course.published` reproduces numbers from papers and public training reports;
* :mod:`~bubblekit.course.demo` reproduces the source article's Python demo;
* :mod:`~bubblekit.course.envcheck` checks the learner's environment (lesson 00);
* :mod:`~bubblekit.course.paths` holds the learning paths and sums the lessons' stated times (lesson 00);
* :mod:`~bubblekit.course.factory` simulates the forward-only car factory (lessons 01 and 02).
"""
