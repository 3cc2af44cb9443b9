"""The sweep's planner: what benchmark.sh runs, in which order, how long it should take and what it records.

    experiments.py  the experiments as data: variants, envs, sizes, numbers of envs and agents, one function each
    grid.py         the workload, the selection (--repeats, --only, --filter, --shard), run names and commands
    estimate.py     the time estimate (a prior refined by recorded durations) and the peak-memory check
    options.py      benchmark.sh's command line (help.txt is its --help)
    plan.py         one invocation's plan: the options, the selected runs, what OUT already holds
    records.py      system.json, env_timing.json, finished runs, the scripts' imports
    groups.py       an exp6 group of one process per agent
    slurm.py        --slurm: the job array
    __main__.py     the commands benchmark.sh calls between runs
"""
