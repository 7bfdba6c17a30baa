# Thin wrapper over course.sh (which does the work and needs no make).
# No target overwrites or deletes a learner's file: `exercises` runs the generator, which
# rewrites only the exercise notebooks it wrote and nobody changed (see scripts/make_exercises.py),
# and `workspace` only copies exercises that workspace/ does not have yet.
.PHONY: help setup lab test lite workspace exercises figures

help:
	@bash course.sh help

setup:
	bash course.sh setup

lab:
	bash course.sh lab $(LAB_ARGS)

test:
	bash course.sh test

lite:
	bash course.sh lite

workspace: setup

exercises: setup
	.venv/bin/python scripts/make_exercises.py

figures: setup
	MPLBACKEND=Agg .venv/bin/python scripts/make_docs_figures.py
