"""nbgrader configuration of the Pipeline Bubbles course (see docs/instructor_guide.md, "Assignments").

The course folder is the folder of this file. ``python scripts/make_nbgrader.py`` writes the
assignments' instructor versions into ``source/<assignment>/`` (one assignment per lesson with
exercises, made from ``solutions/``); nbgrader writes ``release/``, ``submitted/``,
``autograded/``, ``feedback/`` and ``gradebook.db`` here. All of them are build outputs or
students' work: git ignores them (``.gitignore`` beside this file). Run nbgrader from this
folder (``cd classroom/nbgrader && nbgrader generate_assignment 03_the_bubble_formula``).
A copy of this file in another folder makes that folder the course
(``python scripts/make_nbgrader.py --course DIR`` puts one there).
"""

import os

c = get_config()  # noqa: F821 - provided by Jupyter's configuration loader

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "pipeline-bubbles"

# Files beside a source notebook that are not for students: the generator's manifest (what it
# wrote, so that it never overwrites an instructor's edit) and the copies it keeps of edited files.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
    ".manifest.json", "*.mine.ipynb", "*.mine-*.ipynb",
]

# The stubs students see: the same as in the course's exercises/ (scripts/make_exercises.py).
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "_Your answer here._"

# Autograding runs every cell; the lessons' simulations and pictures need more than nbgrader's
# default of 30 s per cell on a busy machine.
c.Execute.timeout = 300

# With a JupyterHub, students fetch and submit through nbgrader's exchange folder. nbgrader's
# 0.9 default is /usr/local/share/nbgrader/exchange (it must exist and be writable by everyone: see the guide).
# c.Exchange.root = "/usr/local/share/nbgrader/exchange"
