"""tune.py's parts: the search space, the study folder and its storage, one trial's process, the re-evaluation, the
study's records, the SLURM array and the MLflow log."""


class Refused(Exception):
    """Bad input: tune.py prints `error: <message>` and exits 2."""
