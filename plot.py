"""Reads the TensorBoard event files of benchmark sweeps and writes summary.csv, charts (PNG) and REPORT.md.

    python plot.py DIR [DIR ...] [--out OUT]
    python plot.py --compare DIR_A [DIR_A ...] --vs DIR_B [DIR_B ...] [--out OUT]

DIR is a sweep folder written by benchmark.sh (system.json, env_timing.json, optionally workload.json,
runs/<exp>/<run>/events.*; exp6: runs/exp6/<group>/group.json and one run folder per agent) or any folder
holding run folders; several DIRs (e.g. the shards of one sweep) are read as one sweep. A run's
configuration and workload come from its `hyperparameters` and `system` text summaries, never from its
folder name. Runs under runs/warmup/ are ignored. Runs found outside runs/<exp1|...|exp14>/ count as exp1
when async; sync ones are labelled "sync" and count as exp2 (those of model size small) and as exp3.

Speedup of A over B = time_B / time_A for matched configurations (same experiment, env, model size,
timing mode and per-iteration workload; for totals also the same number of iterations), paired by seed.

This file is the command line; the report itself is the report/ package (its __init__.py lists the stages).
"""

from report.main import main

if __name__ == "__main__":
    main()
