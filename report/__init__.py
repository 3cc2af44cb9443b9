"""The report of one or more sweeps (plot.py is its command line): summary.csv, the charts and REPORT.md.

What a variant is (label, colour, algorithm, baseline) is the registry's, sweep/variants.py; what an experiment is and
what the report reads of it (its topic, runs, windows, learning evidence, section) is its object's,
sweep/experiments.py. The modules, in the order the data flows:

- settings.py: what is compared and how, the report's constants (labels and colours from the registry, windows,
  metrics, levels); types.py: the types the stages pass on (Condition, RunSeries, Sweep, Group, Pair, ...);
  messages.py: warnings and the error that stops plot.py.
- load.py: the event files and the sweep's own files into a Sweep; machines.py: the machine a sweep ran on (its kind,
  in words); summary.py: one row per run, summary.csv; stats.py: selecting an experiment's rows, pairing, means,
  intervals, cells.
- charts.py and text.py: the drawing and the writing every section shares; standings.py: the ranking of variants
  against the fastest (break-even, conclusions, bullets) that the ranking answers share; cost_model.py: the cost model
  t(N) = a + b·N; curves.py: the learning-curve figure.
- The sections, none importing another: one per experiment, its `section` (ranking.py, sizes.py, env_backend.py,
  compile_modes.py, scaling.py, agents.py, dqn.py, doors.py); header.py (method and machine, how to read the report),
  details.py (duration against env complexity, pairwise speedups, overhead, synchronised rollout and update, memory),
  learning.py (final returns and learning curves), compare.py (two sweeps side by side).
- The command sets' reports, each `python -m report.<module> DIR` on its folder's plan: study.py (one study of
  tune.py, and what the others read of a study), studies.py (a command set's studies: its plan, each study loaded,
  the values per configuration compared across studies), search.py and population.py (the search command sets'),
  lengths.py and budget.py (the trial-length command sets', with cells.py, their cells of studies and reruns),
  continuous.py and cnn.py (the command sets that time the env alone, with envshare.py, their statistics; each also
  its experiment's section of a sweep).
- main.py runs the sections in parallel and writes REPORT.md: its title, 'The answer' (the short bullets each answer
  section returns beside its lines, a text.Answer, linked to its heading; the headline chart; the machine and date),
  the answer sections, 'Method and machine' (header.py), how to read it and the details.

docs/extending.md says how a new experiment gets its section.
"""
