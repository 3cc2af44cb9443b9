"""The search space: the algorithm's default (docs/tuning.md's table is `python -m search.space`) or a JSON file,
checked against the script's Args.

A space maps an `Args` field to its range: {"type": "float" | "int", "low": L, "high": H, "log": true | false} or
{"type": "categorical", "choices": [...]}."""
import ast
import json
import math

import optuna

from search import Refused

DEFAULT_SPACES = {
    "dqn": {
        "learning_rate": {"type": "float", "low": 1e-4, "high": 1e-2, "log": True},
        "buffer_size": {"type": "int", "low": 1000, "high": 50000, "log": True},
        "batch_size": {"type": "categorical", "choices": [32, 64, 128, 256]},
        "train_frequency": {"type": "int", "low": 1, "high": 16, "log": True},
        "target_network_frequency": {"type": "int", "low": 100, "high": 5000, "log": True},
        "gamma": {"type": "float", "low": 0.9, "high": 0.999},
        "exploration_fraction": {"type": "float", "low": 0.05, "high": 0.5},
        "end_e": {"type": "float", "low": 0.01, "high": 0.2},
    },
    "ppo": {
        "learning_rate": {"type": "float", "low": 1e-4, "high": 3e-3, "log": True},
        "ent_coef": {"type": "float", "low": 1e-4, "high": 0.1, "log": True},
        "clip_coef": {"type": "float", "low": 0.1, "high": 0.3},
        "gamma": {"type": "float", "low": 0.95, "high": 0.999},
        "gae_lambda": {"type": "float", "low": 0.8, "high": 0.99},
        "vf_coef": {"type": "float", "low": 0.25, "high": 1.0},
        "max_grad_norm": {"type": "float", "low": 0.3, "high": 1.0},
        "num_minibatches": {"type": "categorical", "choices": [4, 8, 16]},
        "update_epochs": {"type": "categorical", "choices": [4, 10]},
    },
    # around CleanRL's continuous-action defaults (the scripts' own): lr 3e-4, no entropy bonus, 32 minibatches of a
    # 2,048-step batch, 10 epochs
    "ppo-continuous": {
        "learning_rate": {"type": "float", "low": 1e-4, "high": 1e-3, "log": True},
        "ent_coef": {"type": "categorical", "choices": [0.0, 0.001, 0.01]},
        "clip_coef": {"type": "float", "low": 0.1, "high": 0.3},
        "gamma": {"type": "float", "low": 0.95, "high": 0.999},
        "gae_lambda": {"type": "float", "low": 0.8, "high": 0.99},
        "vf_coef": {"type": "float", "low": 0.25, "high": 1.0},
        "max_grad_norm": {"type": "float", "low": 0.3, "high": 1.0},
        "num_minibatches": {"type": "categorical", "choices": [16, 32, 64]},
        "update_epochs": {"type": "categorical", "choices": [5, 10, 20]},
    },
    # around CleanRL's Atari defaults (the ppo_atari_*.py scripts' own): lr 2.5e-4, clip 0.1, 4 minibatches of a
    # 1,024-step batch, 4 epochs
    "ppo-atari": {
        "learning_rate": {"type": "float", "low": 1e-4, "high": 1e-3, "log": True},
        "ent_coef": {"type": "float", "low": 1e-3, "high": 0.05, "log": True},
        "clip_coef": {"type": "float", "low": 0.05, "high": 0.3},
        "gamma": {"type": "float", "low": 0.95, "high": 0.999},
        "gae_lambda": {"type": "float", "low": 0.8, "high": 0.99},
        "vf_coef": {"type": "float", "low": 0.25, "high": 1.0},
        "max_grad_norm": {"type": "float", "low": 0.3, "high": 1.0},
        "num_minibatches": {"type": "categorical", "choices": [4, 8]},
        "update_epochs": {"type": "categorical", "choices": [2, 4, 8]},
    },
}
SET_BY_TUNE = ("seed", "log_dir", "run_name")  # each trial's own
SET_BY_POPULATION = ("num_seeds", "hparams")  # with --population: each population process's own
KEYS = {"float": {"type", "low", "high", "log"}, "int": {"type", "low", "high", "log"}, "categorical": {"type", "choices"}}


def class_fields(script: str, name: str) -> dict | None:
    """The annotated fields of the script's class `name`, {field: annotation source}, read with ast (nothing imported);
    None if it has no such class."""
    with open(script) as f:
        tree = ast.parse(f.read(), script)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return {item.target.id: ast.unparse(item.annotation) for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    return None


def script_defaults(script: str) -> dict:
    """The literal defaults of the script's `Args` fields, {field: value}, read with ast; {} if the script or the
    class is missing."""
    try:
        with open(script) as f:
            tree = ast.parse(f.read(), script)
    except OSError:
        return {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Args":
            return {item.target.id: item.value.value for item in node.body if isinstance(item, ast.AnnAssign)
                    and isinstance(item.target, ast.Name) and isinstance(item.value, ast.Constant)}
    return {}


def argparse_fields(script: str) -> dict | None:
    """The flags of an argparse script (CleanRL's older style), {dest: its type= source, 'str' without one}, read
    with ast from its `add_argument("--name", ...)` calls; None if it has none."""
    with open(script) as f:
        tree = ast.parse(f.read(), script)
    fields = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
                and node.args and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("--")):
            kind = next((ast.unparse(word.value) for word in node.keywords if word.arg == "type"), "str")
            fields[node.args[0].value[2:].replace("-", "_")] = kind
    return fields or None


def script_fields(script: str) -> dict:
    """The fields of the script's `Args` dataclass (tyro), or else its argparse flags."""
    fields = class_fields(script, "Args") or argparse_fields(script)
    if fields is None:
        raise Refused(f"{script} has no Args dataclass and no argparse flags: tune.py cannot tell its flags")
    return fields


def is_benchmark_script(fields: dict) -> bool:
    """A script of this repository's contract (its run folder from --log-dir and --run-name, iteration lines); any
    other is run as CleanRL's scripts are (docs/tuning.md, "Scripts that are not ours")."""
    return {"log_dir", "run_name"} <= set(fields)


def guess_algorithm(script_name: str) -> str | None:
    """The default space's algorithm of a script that is not ours, by its name (CleanRL's ppo.py,
    ppo_continuous_action.py, dqn.py, dqn_jax.py ...); None for any other name."""
    for prefix, algorithm in (("ppo_continuous", "ppo-continuous"), ("dqn", "dqn"), ("ppo", "ppo")):
        if script_name.startswith(prefix):
            return algorithm
    return None


def agent_fields(script: str) -> set:
    """The fields a script takes per agent in its --hparams file: its `HParams` class's, or the names of its `HPARAMS`
    tuple (of which the PPO scripts make their HParams); empty if it takes no such file."""
    if "hparams" not in script_fields(script):
        return set()
    with open(script) as f:
        tree = ast.parse(f.read(), script)
    names = [node.value for node in tree.body if isinstance(node, ast.Assign)
             and [ast.unparse(target) for target in node.targets] == ["HPARAMS"]]
    return set(class_fields(script, "HParams") or (ast.literal_eval(names[0]) if names else ()))


def load_space(path: str, algorithm: str) -> dict:
    """The space of --space FILE, or the algorithm's default."""
    if not path:
        return DEFAULT_SPACES[algorithm]
    try:
        with open(path) as f:
            space = json.load(f)
    except OSError as error:
        raise Refused(f"--space {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise Refused(f"--space {path}: not JSON ({error})") from None
    if not isinstance(space, dict) or not space:
        raise Refused(f"--space {path}: want a JSON object mapping Args fields to ranges")
    for name, entry in space.items():
        problem = entry_problem(entry)
        if problem:
            raise Refused(f"--space {path}: {name}: {problem}")
    return space


def entry_problem(entry) -> str | None:
    """What is wrong with one range, or None."""
    if not isinstance(entry, dict) or entry.get("type") not in KEYS:
        return 'want {"type": "float" | "int" | "categorical", ...}'
    kind, unknown = entry["type"], set(entry) - KEYS[entry["type"]]
    if unknown:
        return f"unknown key(s) {', '.join(sorted(unknown))} for type {kind}"
    if kind == "categorical":
        choices = entry.get("choices")
        if not isinstance(choices, list) or not choices or not all(isinstance(c, (int, float, str, bool)) for c in choices):
            return "want a non-empty list of numbers or strings under choices"
        return None
    number = int if kind == "int" else (int, float)
    low, high = entry.get("low"), entry.get("high")
    if not all(isinstance(v, number) and not isinstance(v, bool) and math.isfinite(v) for v in (low, high)):
        return f"want {kind} numbers low and high"
    if low > high:
        return f"low {low} is above high {high}"
    if not isinstance(entry.get("log", False), bool) or (entry.get("log") and low <= 0):
        return "log wants true or false, and a positive low"
    return None


def check_space(space: dict, fields: dict, script: str, fixed: set):
    """Every searched name is a field of the script's Args, not one tune.py sets or a script flag fixes."""
    for name in space:
        if name not in fields:
            raise Refused(f"the space names {name}, which {script} has no flag for (its Args lacks the field)")
        if name in SET_BY_TUNE:
            raise Refused(f"the space names {name}: tune.py sets each trial's {name.replace('_', '-')} itself")
        if name in fixed:
            raise Refused(f"--{name.replace('_', '-')} is both a script flag and searched: drop one")


def suggest(trial: optuna.Trial, space: dict) -> dict:
    """The trial's values, one per field (an enqueued trial gets its own: a retried configuration)."""
    values = {}
    for name, entry in space.items():
        if entry["type"] == "categorical":
            values[name] = trial.suggest_categorical(name, entry["choices"])
        elif entry["type"] == "int":
            values[name] = trial.suggest_int(name, entry["low"], entry["high"], log=entry.get("log", False))
        else:
            values[name] = trial.suggest_float(name, entry["low"], entry["high"], log=entry.get("log", False))
    return values


def flags(params: dict) -> list:
    """The script flags that set the values: --learning-rate 0.001 ..."""
    return [word for name, value in params.items() for word in (f"--{name.replace('_', '-')}", str(value))]


# THE DEFAULT SPACES AS DOCS/TUNING.MD GIVES THEM
def number_text(value) -> str:
    """1e-4, 0.95, 5,000: a bound or choice as the docs write it."""
    if isinstance(value, float) and value and abs(value) < 0.01:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def range_text(entry: dict | None) -> str:
    """One range in words: 'log [1e-4, 3e-3]', 'int, log [1,000, 50,000]', '{4, 8, 16}'; '–' for None."""
    if entry is None:
        return "–"
    if entry["type"] == "categorical":
        return "{" + ", ".join(map(number_text, entry["choices"])) + "}"
    words = (["int"] if entry["type"] == "int" else []) + (["log"] if entry.get("log") else [])
    bounds = f"[{number_text(entry['low'])}, {number_text(entry['high'])}]"
    return ", ".join(words[:-1] + [f"{words[-1]} {bounds}"]) if words else bounds


def spaces_table() -> str:
    """The default spaces as one markdown table: a row per field, a column per algorithm."""
    names = list(DEFAULT_SPACES)
    fields = list(dict.fromkeys(field for space in DEFAULT_SPACES.values() for field in space))
    lines = ["| field | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    lines += [f"| `{field}` | " + " | ".join(range_text(DEFAULT_SPACES[name].get(field)) for name in names) + " |"
              for field in fields]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(spaces_table(), end="")
