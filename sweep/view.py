"""What the report reads of an experiment: its question, its report section and that section's place, and which of the
generic sections (windows, learning, overhead, rollout/update, pairwise speedups, learning curves) read its runs and
how. Each experiment (sweep/experiments.py) sets these beside its runs, in its one class; nothing here decides a run."""


class ReportView:
    """The defaults: an experiment of the published study, read by every generic section, split by model size."""

    topic = ""  # what it answers (the report names the experiments a sweep lacks by it)
    shared_windows = True  # its runs have the reference length: the generic sections' windows and memory chart
    learning = "whole"  # the learning evidence: "whole" runs, "async" runs only, "groups" (usable groups), "own"
    split = ("size", "model size")  # the field its final returns are split by, and its name
    overhead = False  # the details' overhead section (start-up, iteration 0, 1-7, steady) reads it
    sync_by = ""  # the details' rollout/update section reads it, split by "env" or "size"
    pairwise = False  # the details' duration against env complexity and pairwise speedups of the compiled variants
    curves = "whole"  # its learning-curve figures: "whole" (one set for all its runs), "size" (one per size), "" none
    unfiled = {}  # the runs found outside runs/<exp>/ it reads as its own: {UNFILED key: their sizes (None: all)}
    varies_num_envs = False  # its runs differ in the number of envs by design (the report's header says so)
    section = ""  # its report section's module (report/<section>.py, whose section_<section> writes it)
    # its section's place among the report's answers, and its chart's claim to head the report (the lowest rank's
    # first chart): the ranking's, then the experiments whose sections read another's runs beside their own (DQN
    # beside PPO's env-backend designs, many agents beside the cost model), then the others. Experiments of one
    # section share both.
    answer_rank, headline_rank = 0, 0
