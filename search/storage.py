"""The study folder's storage: its settings (study.json, and what makes a study its own), its Optuna storage (a journal
file there by default, or a database's URL), the sampler and the pruner; a study created or loaded from them. The
workers' trial loop (search/study.py) runs on what this opens."""
import json
import os
import shlex
import time
import zlib
from dataclasses import asdict, dataclass, field

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from search import Refused

SETTINGS_FILE, JOURNAL_FILE = "study.json", "journal.log"
STORAGE_ATTEMPTS = 3
# what makes a study: a rerun that changes any of it is refused (the trial count, workers and the rest may change)
IDENTITY = ("script", "script_flags", "space", "sampler", "pruner", "seed", "storage", "population", "seeds_per_trial",
            "aggregate", "pbt", "python")


@dataclass
class Settings:
    """What study.json holds."""
    script: str
    script_flags: list
    algorithm: str
    space: dict
    sampler: str
    pruner: str
    seed: int
    storage: str = ""
    study_name: str = ""
    trials: int = 0
    eval_seeds: int = 0
    workers: int = 1
    population: int = 0
    seeds_per_trial: int = 1
    aggregate: str = "mean"  # of a trial's seeds' objectives: "mean" or "iqm"
    contract: str = "benchmark"  # "cleanrl": a script not ours, run in its run folder (docs/tuning.md)
    pbt: bool = False  # the populations train with PBT (--pbt N): a trial's values are its agent's start
    python: str = ""  # the interpreter of the trials' processes (--python), absolute; "": tune.py's own
    extra: dict = field(default_factory=dict)


def settings_path(study_dir: str) -> str:
    return os.path.join(study_dir, SETTINGS_FILE)


def read_settings(study_dir: str) -> Settings:
    path = settings_path(study_dir)
    try:
        with open(path) as f:
            return Settings(**json.load(f))
    except OSError:
        raise Refused(f"{study_dir} holds no study ({SETTINGS_FILE} is missing)") from None
    except (json.JSONDecodeError, TypeError) as error:
        raise Refused(f"{path} is not a study's settings: {error}") from None


def save_settings(study_dir: str, settings: Settings):
    """Writes study.json; a folder holding another study (another script, flags, space, sampler...) is refused."""
    path = settings_path(study_dir)
    if os.path.exists(path):
        previous = asdict(read_settings(study_dir))
        changed = [name for name in IDENTITY if previous[name] != asdict(settings)[name]]
        if changed:
            raise Refused(f"{study_dir} holds another study (its {', '.join(changed)} differ; see {path}): rerun "
                          "that command to resume it, or give another --out")
    os.makedirs(study_dir, exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(asdict(settings), f, indent=1)
    os.replace(path + ".tmp", path)


def open_storage(study_dir: str, url: str):
    """The study's storage: the journal file in the folder, or the Optuna storage at url."""
    if not url:
        return JournalStorage(JournalFileBackend(os.path.join(study_dir, JOURNAL_FILE)))
    for attempt in range(STORAGE_ATTEMPTS):  # workers started together race to create a database's tables
        try:
            return optuna.storages.get_storage(url)
        except Exception as error:  # every backend has its own errors: each says what went wrong
            if attempt + 1 == STORAGE_ATTEMPTS:
                message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise Refused(f"--storage {url}: cannot open it: {message}") from None
            time.sleep(0.5 * (attempt + 1))


def dashboard_command(study_dir: str, url: str) -> str:
    """The command that shows the study in optuna-dashboard (requirements-dashboard.txt): its storage, the journal file
    by default."""
    return f"optuna-dashboard {shlex.quote(url or os.path.join(study_dir, JOURNAL_FILE))}"


TPE_STARTUP = 10  # TPE's first trials, drawn at random (Optuna's default, said in exp10's report)


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=TPE_STARTUP)
    return TrialSeededRandomSampler(seed)


class TrialSeededRandomSampler(optuna.samplers.RandomSampler):
    """Optuna's random sampler, trial n's values drawn from (seed, n, name): the same trial numbers get the same
    configurations whatever the workers' order, in every study of that seed and space (exp10's designs)."""

    def __init__(self, seed: int):
        super().__init__(seed=seed)
        self.seed = seed

    def sample_independent(self, study, trial, param_name, param_distribution):
        rng = optuna.samplers.RandomSampler(seed=zlib.crc32(f"{self.seed}/{trial.number}/{param_name}".encode()))
        return rng.sample_independent(study, trial, param_name, param_distribution)


def make_pruner(name: str) -> optuna.pruners.BasePruner:
    """Hyperband counts its resources in iterations (max: the longest trial seen), reduction factor 3."""
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1, max_resource="auto", reduction_factor=3)
    return optuna.pruners.MedianPruner() if name == "median" else optuna.pruners.NopPruner()


def load(study_dir: str, sampler_seed: int | None = None) -> tuple[Settings, optuna.Study]:
    """The folder's settings and its study, from its storage."""
    settings = read_settings(study_dir)
    storage = open_storage(study_dir, settings.storage)
    seed = settings.seed if sampler_seed is None else sampler_seed
    try:
        study = optuna.load_study(study_name=settings.study_name, storage=storage,
                                  sampler=make_sampler(settings.sampler, seed), pruner=make_pruner(settings.pruner))
    except KeyError:
        raise Refused(f"the storage of {study_dir} holds no study named {settings.study_name}") from None
    return settings, study


def create(study_dir: str, settings: Settings, sampler_seed: int) -> optuna.Study:
    storage = open_storage(study_dir, settings.storage)
    try:
        return optuna.create_study(storage=storage, study_name=settings.study_name, direction="maximize",
                                   sampler=make_sampler(settings.sampler, sampler_seed),
                                   pruner=make_pruner(settings.pruner), load_if_exists=True)
    except Exception as error:
        raise Refused(f"the study's storage does not answer: {str(error).strip().splitlines()[0]}") from None
