"""Reports people would rather look at than read: the `micro-rt report` page, the lane chart
of `plan --html` and `optimize --html`, `compare`, the `--format` tables and the Model
Explorer export.

  facts.py           per-buffer and per-operator facts (the numbers every view shows)
  model_report.py    gathers one model's report: plan, profile, fit, optimize suggestion
  charts.py          the SVG charts (why hand-written SVG: see its docstring)
  page.py            the self-contained HTML pages
  formats.py         tables as text, CSV, markdown and HTML
  model_explorer.py  per-operator node data for Google's Model Explorer
  compare.py         two models side by side
"""
