"""The report of one or more sweeps (plot.py is its command line): summary.csv, the charts and REPORT.md.

Stages, in the order the data flows: settings.py (what is compared and how; the types), load.py (event files and the
sweep's own files into a Sweep), summary.py (one row per run), stats.py (pairing, means, intervals), charts.py and
text.py (the drawing and the writing every section shares); then one module per section of the report: header.py,
ranking.py (exp1), sizes.py (exp7), env_backend.py (exp4), compile_modes.py (exp2, exp3), scaling.py (exp5),
agents.py (exp6), dqn.py (exp8), doors.py (exp9), details.py, learning.py and compare.py; main.py runs the sections in
parallel and writes REPORT.md: its title, 'The answer' (the short bullets each answer section returns beside its lines,
a text.Answer, linked to its heading; the headline chart; the machine and date), the answer sections, 'Method and
machine' (header.py), how to read it and the details. docs/extending.md says how a new experiment gets its section.
"""
