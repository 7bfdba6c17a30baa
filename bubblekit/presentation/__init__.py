"""Presentation: pictures and interactive explorers (layer 3 of bubblekit).

* :mod:`~bubblekit.presentation.diagram` holds the pipeline diagram's rules (colours, span kinds,
  texts) in pure Python, shared by plotting and svg;
* :mod:`~bubblekit.presentation.svg` draws the pipeline diagram as SVG text (pure Python), and
  :mod:`~bubblekit.presentation.svg_plotting` is ``bk.plotting`` where matplotlib cannot be
  imported (the browser edition): the diagram and its animation as SVG;
* :mod:`~bubblekit.presentation.plotting` draws pipeline diagrams, memory curves, sweeps
  and animations with matplotlib;
* :mod:`~bubblekit.presentation.explorers` builds ipywidgets explorers (sliders for p, m, v,
  schedule and costs) whose controls and readouts tests can drive;
* :mod:`~bubblekit.presentation.classroom` serves an explorer as a web app (Voila) for a room;
* :mod:`~bubblekit.presentation.textcache` is the explorers' Agg canvas, which rasterizes each
  distinct text once (text was most of a redraw: ``benchmarks/bench_explorer.py --breakdown``).
"""
