"""--population N: N trials asked at once and trained as the agents of one process of a script that takes --hparams
(ppo_linen_scan.py: the agents vmapped in one compiled call), their N results told when it ends.

The script's `HParams` fields vary from agent to agent; the space's other fields (num_minibatches, update_epochs:
shapes and loop lengths) cannot, so the population's trials are grouped by their values of those, one process per
group. Trial n keeps its seed (the study's --seed + n) and its run folder (runs/trial_NNNN), as in a study of trials
in processes. No pruning: a population's trials run to their end."""
import json
import os
import re
import time

import optuna
from optuna.trial import TrialState

from search import trial as trial_process
from search.space import flags
from search.study import Search, seed_runs, trial_seeds

POPULATIONS_DIR = "populations"  # the --hparams file of each population process
DIVERGED_LINE = re.compile(r"^error: (.*); partial run in (.*)$")


def groups(trials: list, agent_fields: set) -> list:
    """The trials in lists that share their values of every non-agent field (in the order of their first trial)."""
    grouped = {}
    for trial in trials:
        static = tuple((name, value) for name, value in trial.params.items() if name not in agent_fields)
        grouped.setdefault(static, []).append(trial)
    return list(grouped.values())


def agent_folder(runs_dir: str, name: str, seed: int, agents: int) -> str:
    """Where the script writes an agent's run: {run_name}__seed{s} when it trains several, else {run_name}."""
    return os.path.join(runs_dir, f"{name}__seed{seed}" if agents > 1 else name)


def diverged_agents(log_path: str) -> dict:
    """{agent run folder: what its error line says} for each agent that stopped on its own (a NaN or inf loss)."""
    with open(log_path, errors="replace") as f:
        return {match[2]: match[1] for line in f if (match := DIVERGED_LINE.match(line.strip()))}


class PopulationSearch(Search):
    """The workers of one tune.py --population N process: each asks N trials, runs them as populations (one process
    per group of shared non-agent values), tells their results, and asks again until the study holds its --trials."""

    def __init__(self, study_dir: str, settings, study: optuna.Study, trials: int, agent_fields: set):
        super().__init__(study_dir, settings, study, trials)
        self.agent_fields = agent_fields
        os.makedirs(os.path.join(study_dir, POPULATIONS_DIR), exist_ok=True)

    def work(self):
        while not self.stopping.is_set():
            trials = self.ask(self.settings.population)
            if not trials:
                return
            for group in groups(trials, self.agent_fields):
                self.run_population(group)

    def run_population(self, trials: list):
        if self.stopping.is_set():  # a group after the one SIGINT or SIGTERM cut short
            for trial in trials:
                self.give_back(trial, "stopped: tune.py was interrupted; retried at the next start")
            return
        name = f"population_{trials[0].number:04d}"
        hparams_path = os.path.join(self.study_dir, POPULATIONS_DIR, f"{name}.json")
        seeds = {trial.number: trial_seeds(self.settings, trial.number) for trial in trials}
        agents = [{"seed": seed, **{key: value for key, value in trial.params.items() if key in self.agent_fields}}
                  for trial in trials for seed in seeds[trial.number]]
        with open(hparams_path, "w") as f:
            json.dump(agents, f, indent=1)
        static = {key: value for key, value in trials[0].params.items() if key not in self.agent_fields}
        population_flags = [*flags(static), "--num-seeds", str(len(agents)), "--hparams", hparams_path]
        argv = trial_process.command(self.settings.script, self.settings.script_flags, population_flags,
                                     agents[0]["seed"], self.runs_dir, name, self.python)
        log_path = os.path.join(self.logs_dir, f"{name}.log")
        print(f"population of trials {trials[0].number}-{trials[-1].number}: {len(agents)} agent(s) in one process",
              flush=True)
        start = time.time()
        ended = trial_process.run(argv, log_path, lambda iteration, value: False,
                                  lambda process: self.running.update({trial._trial_id: process for trial in trials}),
                                  self.environment)
        end = time.time()  # every agent's end: the report's clock must not spread them over the tells that follow
        for trial in trials:
            self.running.pop(trial._trial_id, None)
            trial.set_user_attr("population_end", end)
        diverged = diverged_agents(log_path)
        for trial in trials:
            run_name = f"trial_{trial.number:04d}"
            run_dirs = []
            for log_dir, seed_name in seed_runs(self.runs_dir, run_name, seeds[trial.number]):
                os.makedirs(log_dir, exist_ok=True)
                run_dirs.append(os.path.join(log_dir, seed_name))
            for seed, run_dir in zip(seeds[trial.number], run_dirs):
                folder = agent_folder(self.runs_dir, name, seed, len(agents))
                if os.path.isdir(folder):
                    os.replace(folder, run_dir)
            self.tell(trial, ended, [(run_dir, diverged.get(agent_folder(self.runs_dir, name, seed, len(agents))))
                                     for seed, run_dir in zip(seeds[trial.number], run_dirs)], log_path, start,
                      (end - start) / len(trials))

    def tell(self, trial: optuna.Trial, ended: trial_process.Ended, agents: list, log_path: str, start: float,
             duration: float):
        """One trial's result from its agents' (run folder, diverged line or None): complete with the aggregate of
        their objectives if every run finished, failed with its own error line if one diverged; a population stopped
        by tune.py, or killed by a signal, is retried whole (once, if killed)."""
        unfinished = [(run_dir, diverged) for run_dir, diverged in agents
                      if not (os.path.isdir(run_dir) and "time/total" in trial_process.read_scalars(run_dir))]
        diverged = next(((run_dir, line) for run_dir, line in unfinished if line), None)
        if unfinished and not diverged:
            if self.stopping.is_set():
                self.give_back(trial, "stopped: tune.py was interrupted; retried at the next start")
                return
            if ended.status < 0 and "retry_of" not in trial.user_attrs:
                self.give_back(trial, f"{trial_process.failure_reason(ended, log_path)}; its population retried")
                self.progress(trial.number, TrialState.FAIL, None, "population killed: retried")
                return
        values = []
        if diverged:
            reason, state = f"exit 3: error: {diverged[1]}; partial run in {diverged[0]}", TrialState.FAIL
        elif unfinished:
            reason, state = trial_process.failure_reason(ended, log_path), TrialState.FAIL
        else:
            found = [trial_process.objective(run_dir) for run_dir, _ in agents]
            values = [value for value, _ in found]
            reason = next((why for value, why in found if value is None), "")
            state = TrialState.FAIL if reason else TrialState.COMPLETE
        self.finish(trial, state, values, reason, os.path.join(self.runs_dir, f"trial_{trial.number:04d}"), start,
                    duration)
