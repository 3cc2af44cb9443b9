"""The sweep's planner: what benchmark.sh runs, in which order, how long it should take and what it records.

    variants.py     the registry of variants: one row per (script, mode), the one place that names a script
    experiments.py  the experiments as objects, one class each: runs and constants, run names, seeds, the report's view
    view.py         what the report reads of an experiment (its section, its rank, the generic sections that read it)
    grids.py        the grids (--grid): which runs each holds, in which order (gpu: its priority order)
    workload.py     the work of every run (workload.json), the PPO and DQN workloads
    runs.py         the selection (--repeats, --only, --filter, --shard), run names, commands, dry-run lines
    shell.py        shell words quoted as bash quotes them
    estimate.py     the time estimate (a prior refined by recorded durations) and the peak-memory check
    options.py      benchmark.sh's command line (help.txt is its --help)
    plan.py         one invocation's plan: the options, the selected runs, the runs left to do, their commands
    ledger.py       what OUT holds: records.txt's runs and verdicts, their durations, the workload, group.json
    machine.py      system.json's record of the machine (CPU details, GPU, packages, commit), the learning check
    records.py      env_timing.json, finished runs, the scripts' imports
    groups.py       a group of agents run as one process per agent
    slurm.py        --slurm: the job array
    handover.py     --only of an experiment that a command set of its own runs: the invocation handed over to it
    __main__.py     the commands benchmark.sh calls before its loop and after it (and a group's runner)
"""
