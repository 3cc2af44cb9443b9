"""One trial: a fresh process of the script, its iteration lines reported to the pruner as they come, SIGTERM when
the pruner says so; its objective read from its event file; its HParams summaries written beside the script's."""
import glob
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from typing import Callable, NamedTuple

from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

ITERATION_LINE = re.compile(r"^iteration (\d+)/\d+ global_step=\d+ return=(\S+)")
OBJECTIVE_TAG = "tune/objective"
LAST_FRACTION = 0.1  # the objective: the mean episodic return over this last fraction of the env steps
# the child (tune.py's interpreter) sets its parent-death signal, then becomes argv (the script under its interpreter,
# --python's or ours): a worker killed with SIGKILL leaves no trial behind
DIE_WITH_PARENT = ("import ctypes, os, signal, sys; ctypes.CDLL(None).prctl(1, signal.SIGTERM); "
                   "os.getppid() == int(sys.argv[1]) or sys.exit(143); os.execv(sys.argv[2], sys.argv[2:])")


class Ended(NamedTuple):
    """How a trial's process ended: its exit status, whether the pruner stopped it, and its last words."""
    status: int
    pruned: bool
    last_line: str


def command(script: str, script_flags: list, params_flags: list, seed: int, log_dir: str, run_name: str,
            python: str = sys.executable) -> list:
    """The trial's argv: the script under `python` (tune.py's own by default) with the user's flags, the suggested
    values, its seed and run folder."""
    return [python, script, *script_flags, *params_flags, "--seed", str(seed), "--log-dir", log_dir,
            "--run-name", run_name]


def run(argv: list, log_path: str, report: Callable[[int, float], bool], started: Callable,
        environment: dict | None = None, cwd: str | None = None) -> Ended:
    """Runs argv with its output in log_path (and `environment` over ours); each iteration line's return goes to
    report(iteration, value), which says whether to prune: then the process gets SIGTERM and ends as the scripts do,
    keeping its event file. started(process) hands the process to whoever may have to stop it; cwd: its working
    folder (a CleanRL-style script's run folder), ours by default."""
    wrapped = [sys.executable, "-c", DIE_WITH_PARENT, str(os.getpid()), *argv]
    pruned, last_line = False, ""
    with open(log_path, "w", buffering=1) as log:
        process = subprocess.Popen(wrapped, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1", **(environment or {})}, cwd=cwd)
        started(process)
        for line in process.stdout:
            log.write(line)
            last_line = line.strip() or last_line
            match = ITERATION_LINE.match(line)
            if match and not pruned and not math.isnan(float(match[2])) and report(int(match[1]), float(match[2])):
                pruned = True
                process.send_signal(signal.SIGTERM)
        status = process.wait()
    return Ended(status, pruned, last_line)


def failure_reason(ended: Ended, log_path: str) -> str:
    """Why a process failed, in a line: its `error:` line where it wrote one, else its exit status and last line."""
    with open(log_path, errors="replace") as f:
        errors = [line.strip() for line in f if line.startswith(("error:", "interrupted by"))]
    said = errors[-1] if errors else ended.last_line or "no output"
    status = f"killed by {signal.Signals(-ended.status).name}" if ended.status < 0 else f"exit {ended.status}"
    return f"{status}: {said}"[:300]


def read_scalars(run_dir: str) -> dict:
    """{tag: [(step, value), ...]} of the event files in run_dir (a truncated last record reads as missing)."""
    scalars = defaultdict(list)
    for path in sorted(glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))):
        try:
            for event in LegacyEventFileLoader(path).Load():
                for value in event.summary.value:
                    if value.WhichOneof("value") == "simple_value":
                        scalars[value.tag].append((event.step, value.simple_value))
        except DecodeError:
            continue
    return scalars


def event_folder(run_dir: str) -> str:
    """Where a run's event files are: run_dir itself (ours), or the newest folder under run_dir/runs/ that holds one
    (a CleanRL-style script names its own run folder there); run_dir where neither has any."""
    if glob.glob(os.path.join(run_dir, "events.out.tfevents.*")):
        return run_dir
    found = glob.glob(os.path.join(run_dir, "runs", "*", "events.out.tfevents.*"))
    return os.path.dirname(max(found, key=os.path.getmtime)) if found else run_dir


def objective(run_dir: str) -> tuple[float | None, str]:
    """The mean of the episodic returns logged over the last 10 % of the run's env steps (at least the last one),
    or None and why not."""
    scalars = read_scalars(run_dir)
    returns = sorted(scalars.get("charts/episodic_return", []))
    if not returns:
        return None, "no episode ended: no charts/episodic_return in the event file"
    final_step = max(step for tag, points in scalars.items() if tag.startswith("charts/") for step, _ in points)
    last = [value for step, value in returns if step > (1 - LAST_FRACTION) * final_step] or [returns[-1][1]]
    value = sum(last) / len(last)
    return (value, "") if math.isfinite(value) else (None, f"the objective is {value}")


# HPARAMS: the plugin's summaries, written as protos (tensorboard's own writer; no TensorFlow needed)
def hparams_value(tag: str, data: plugin_data_pb2.HParamsPluginData) -> summary_pb2.Summary.Value:
    return summary_pb2.Summary.Value(tag=tag, metadata=metadata.create_summary_metadata(data),
                                     tensor=metadata.NULL_TENSOR)


def write_events(log_dir: str, values: list, step: int = 0):
    writer = EventFileWriter(log_dir, filename_suffix=".hparams")
    for value in values:
        writer.add_event(event_pb2.Event(wall_time=time.time(), step=step, summary=summary_pb2.Summary(value=[value])))
    writer.close()


def seed_tag(k: int) -> str:
    """The HParams metric of a trial's k-th seed's value (a study of several seeds per trial)."""
    return f"{OBJECTIVE_TAG}_seed{k}"


def write_experiment(log_dir: str, space: dict, seeds_per_trial: int = 1):
    """The study's HParams experiment at the runs' root: its parameters and its metrics, the objective (and each
    seed's value where a trial has several)."""
    infos = []
    for name, entry in space.items():
        info = api_pb2.HParamInfo(name=name, type=api_pb2.DATA_TYPE_FLOAT64)
        if entry["type"] == "categorical":
            info.domain_discrete.extend(entry["choices"])
        else:
            info.domain_interval.min_value, info.domain_interval.max_value = entry["low"], entry["high"]
        infos.append(info)
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=OBJECTIVE_TAG),
                                  display_name="objective (mean return, last 10 % of steps)")]
    metrics += [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=seed_tag(k)), display_name=f"seed {k}'s objective")
                for k in range(seeds_per_trial if seeds_per_trial > 1 else 0)]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)
    write_events(log_dir, [hparams_value(metadata.EXPERIMENT_TAG, plugin_data_pb2.HParamsPluginData(
        experiment=experiment, version=metadata.PLUGIN_DATA_VERSION))])


def write_session(run_dir: str, params: dict, value: float | None, succeeded: bool, start: float, end: float,
                  seed_values: list = ()):
    """One trial's HParams session: its values, its objective (when it has one), each seed's value (several seeds)
    and how it ended."""
    start_info = plugin_data_pb2.SessionStartInfo(start_time_secs=start)
    for name, param in params.items():
        if isinstance(param, str):
            start_info.hparams[name].string_value = param
        elif isinstance(param, bool):
            start_info.hparams[name].bool_value = param
        else:
            start_info.hparams[name].number_value = param
    status = api_pb2.STATUS_SUCCESS if succeeded else api_pb2.STATUS_FAILURE
    end_info = plugin_data_pb2.SessionEndInfo(status=status, end_time_secs=end)
    values = [hparams_value(metadata.SESSION_START_INFO_TAG, plugin_data_pb2.HParamsPluginData(
        session_start_info=start_info, version=metadata.PLUGIN_DATA_VERSION))]
    if value is not None:
        values.append(summary_pb2.Summary.Value(tag=OBJECTIVE_TAG, simple_value=value))
    values += [summary_pb2.Summary.Value(tag=seed_tag(k), simple_value=found) for k, found in enumerate(seed_values)]
    values.append(hparams_value(metadata.SESSION_END_INFO_TAG, plugin_data_pb2.HParamsPluginData(
        session_end_info=end_info, version=metadata.PLUGIN_DATA_VERSION)))
    os.makedirs(run_dir, exist_ok=True)
    write_events(run_dir, values)
