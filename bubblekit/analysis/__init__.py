"""Analysis: what you do *with* simulations and measurements (layer 2 of bubblekit).

* :mod:`~bubblekit.analysis.traces` reads profiler traces (Chrome / Kineto JSON, CSV) into timelines;
* :mod:`~bubblekit.analysis.calibrate` fits the simulator's costs to a measured step;
* :mod:`~bubblekit.analysis.planner` chooses a configuration (p, m, v, schedule) under a memory budget;
* :mod:`~bubblekit.analysis.search` searches schedules automatically;
* :mod:`~bubblekit.analysis.balance` splits layers into stages to even out the slowest stage.

Everything here builds on the pure core (schedules, costs, simulator, timeline) and imports
no matplotlib, widgets or torch.
"""
