"""nbgrader configuration of the Pipeline Bubbles course's Chinese edition (see docs/instructor_guide.zh-CN.md).

The course folder is the folder of this file. ``python scripts/make_nbgrader.py --lang zh``
writes the Chinese assignments' instructor versions into ``source/<assignment>/`` (one per
lesson with exercises, made from ``solutions/zh/``); nbgrader writes ``release/``,
``submitted/``, ``autograded/``, ``feedback/`` and ``gradebook.db`` here, all ignored by git
(``.gitignore`` beside this file). Run nbgrader from this folder
(``cd classroom/nbgrader/zh && nbgrader generate_assignment 03_the_bubble_formula``): this
file then comes after the English course's (which ``course.sh setup`` makes nbgrader read
first) and decides the folder, the course id and the stubs.

The same settings as ``classroom/nbgrader/nbgrader_config.py`` but for the course id (the
Chinese course is a course of its own: a JupyterHub can hold both) and the stubs, which are the
Chinese exercises' (``exercises/zh/``, ``scripts/make_exercises.py``).
"""

import os

c = get_config()  # noqa: F821 - provided by Jupyter's configuration loader

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "pipeline-bubbles-zh"

# Files beside a source notebook that are not for students: the generator's manifest (what it
# wrote, so that it never overwrites an instructor's edit) and the copies it keeps of edited files.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
    ".manifest.json", "*.mine.ipynb", "*.mine-*.ipynb",
]

# The stubs students see: the same as in the course's Chinese exercises (exercises/zh/).
c.ClearSolutions.code_stub = {"python": "# 在这里写你的代码\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "_在这里写下你的答案。_"

# Autograding runs every cell; the lessons' simulations and pictures need more than nbgrader's
# default of 30 s per cell on a busy machine.
c.Execute.timeout = 300

# With a JupyterHub, students fetch and submit through nbgrader's exchange folder. nbgrader's
# 0.9 default is /usr/local/share/nbgrader/exchange (it must exist and be writable by everyone: see the guide).
# c.Exchange.root = "/usr/local/share/nbgrader/exchange"
