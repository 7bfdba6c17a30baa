# Thin wrapper over course.sh (which does the work and needs no make).
.PHONY: help setup lab test exercises figures

help:
	@bash course.sh help

setup:
	bash course.sh setup

lab:
	bash course.sh lab

test:
	bash course.sh test

exercises: setup
	.venv/bin/python scripts/make_exercises.py

figures: setup
	MPLBACKEND=Agg .venv/bin/python scripts/make_docs_figures.py
