"""The results site: `python -m report.site OUT` builds a static site into OUT with mkdocs-material
(requirements-site.txt): the README's answer with the headline figure, the docs/ pages, a page per committed sitting
under results/ (its REPORT.md, every chart of its folder, its machine) and the answer explorer, whose data
(explorer.json) is written from tools/answer_table.py's functions at build time. Everything the pages load is in the
build: no font, script or style from another host. Serve it with `python -m http.server -d OUT`."""

import argparse
import json
import logging
import math
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))  # answer_table.py, the README's tables

import answer_table  # noqa: E402 (after the path)
from report.machines import cpu_name, gpu_model, plan_machine  # noqa: E402
from report.stats import paired_labels  # noqa: E402
from report.standings import relative_to  # noqa: E402
from report.text import slug  # noqa: E402
from sweep import variants  # noqa: E402
from sweep.experiments import SIZES  # noqa: E402

PROG = "python -m report.site"
MARKER = ".benchback-site"  # marks a folder this command built (mkdocs empties its site folder, dotfiles kept)
FIGURE = "docs/img/answer.png"  # the headline figure (tools/derive.py --only figure)
EXPLORER_FILES = tuple(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"explorer.{kind}")
                       for kind in ("js", "css"))  # the explorer's script and style, copied beside its page
ENV_LANGUAGE = {variants.GYMNAX: "JAX", variants.GYMNASIUM: "NumPy", variants.TORCH_ENV: "torch"}
ALGORITHM = {variants.PPO: "PPO", variants.DQN: "DQN"}
SIZES_SWEEP = "cpu-2core-exp7"  # the model sizes' sweep: its every size a case of its own
SCALING_SWEEP = "cpu-2core-exp5-epyc"  # the number of envs' sweep: its every number of envs a case of its own
EXPLORER_PAGE = """---
hide: [navigation, toc]
---

# Answer explorer

Choose your case: the designs measured for it, ranked by their steady iteration (the median of iterations 8 on)
relative to the fastest design of the same sitting, as the README's tables compute them (`tools/answer_table.py`).
A case no committed sitting ran says *not measured*: nothing is interpolated. A ratio marked † comes from a sitting of
its own, relative to that sitting's fastest design. Continuous control, convolutional agents and searches are in
[the answer](index.md).

<div id="explorer" data-src="explorer.json"><noscript>The explorer needs JavaScript.</noscript></div>
<script src="explorer.js"></script>
"""


class SiteError(Exception):
    """Bad input: one error line, no traceback."""


def fail(message):
    sys.exit(f"{PROG}: error: {message}")


# THE EXPLORER'S DATA: one case per column of the README's per-iteration table (and per number of envs of the number-of-envs sweep)
def explorer_columns(results: str) -> tuple:
    """answer_table's per-iteration columns, and one more for each model size of the model sizes' sweep and each
    number of envs of the number of envs' sweep that they lack (read and ranked by the same functions)."""
    columns = list(answer_table.COLUMNS)
    for sweep, field, title in ((SIZES_SWEEP, "size", "{} model, CPU"), (SCALING_SWEEP, "num_envs", "{:,} envs, CPU")):
        template = next(column for column in columns if column.sweep == sweep)
        taken = {getattr(column, field) for column in columns if column.sweep == sweep}
        values = {type(getattr(template, field))(row[field]) for row in answer_table.read_rows(results, sweep)
                  if row["exp"] == template.exp and row["timing"] == "async"} - taken
        columns += [template._replace(title=title.format(value), **{field: value}) for value in
                    sorted(values, key=SIZES.index if field == "size" else None)]
    return tuple(columns)


def sitting_system(results: str, sweep: str) -> dict:
    with open(os.path.join(results, sweep, "system.json")) as file:
        return json.load(file)


def range_of(rows: list, fastest, label) -> dict:
    """The ratio's spread: the report's interval over envs (a range, or a 95% CI from enough envs); with one env,
    the range of the ratios over its seeds; with one run, none."""
    low, high, kind = relative_to(rows, fastest, label, answer_table.STEADY)[1]
    if not math.isnan(low):
        return {"low": low, "high": high, "kind": f"{kind} over envs"}
    speedups = [pair.speedup for pair in paired_labels(rows, fastest, label, answer_table.STEADY)]
    if len(speedups) > 1:
        return {"low": min(speedups), "high": max(speedups), "kind": "range over seeds"}
    return {"low": None, "high": None, "kind": "one run"}


def sitting_rows(results: str, column, sweep: str, keys: dict, marked: bool) -> list:
    """The explorer's rows of the designs (keys: {design name: (script, mode)}) that one sitting ran in the column,
    each with its ratio to that sitting's fastest design, its range, the sitting, its machine and date."""
    rows = [row for row in answer_table.selection(answer_table.read_rows(results, sweep), column)
            if row["label"] in set(keys.values())]
    if not rows:
        return []
    ratios, fastest_s = answer_table.relatives(rows, own_sitting=marked)
    fastest = min(ratios, key=lambda key: ratios[key].value)
    system = sitting_system(results, sweep)
    machine = gpu_model(system) or answer_table.cpu_text(system)
    by_key = {key: name for name, key in keys.items()}
    return [{"design": by_key[key], "ratio": ratio.value, "text": ratio.text(),
             **range_of(rows, fastest, key), "sitting": sweep, "machine": machine, "date": system["date"][:10],
             "fastest_s": fastest_s} for key, ratio in ratios.items()]


def explorer_case(results: str, column) -> dict:
    """One case: what it is (algorithm, model size, number of envs, hardware) and its designs ranked, as
    answer_table.column_ratios ranks them (a design the main sitting lacks from the column's sitting of its own)."""
    design_of = {design.name: design for design in answer_table.DESIGNS}
    chosen = {name: answer_table.variant_of(design, column) for name, design in design_of.items()}
    keys = {name: (row.script, row.mode) for name, row in chosen.items() if row}
    rows = sitting_rows(results, column, column.sweep, keys, False)
    if column.extra_sweep:
        measured = {row["design"] for row in rows}
        rows += [row for row in sitting_rows(results, column, column.extra_sweep, keys, True)
                 if row["design"] not in measured]
    for row in rows:
        row.update(env_language=ENV_LANGUAGE[chosen[row["design"]].backend], script=chosen[row["design"]].file)
    system = sitting_system(results, column.sweep)
    return {"title": column.title, "algorithm": ALGORITHM[column.family], "size": column.size,
            "num_envs": column.num_envs, "hardware": "GPU" if gpu_model(system) else "CPU",
            "envs": list(column.envs) or sorted({row["env"] for row in answer_table.selection(
                answer_table.read_rows(results, column.sweep), column)}),
            "sitting": column.sweep, "rows": sorted(rows, key=lambda row: row["ratio"])}


def explorer_data(results: str) -> dict:
    """explorer.json: every case, and the choices in their order (env languages, algorithms, sizes, numbers of
    envs, hardware)."""
    cases = [explorer_case(results, column) for column in explorer_columns(results)]
    return {"metric": "steady iteration (the median of iterations 8 on) ÷ the fastest design's of the same sitting",
            "choices": {"env_language": ["any", *ENV_LANGUAGE.values()], "algorithm": list(ALGORITHM.values()),
                        "size": sorted({case["size"] for case in cases}, key=SIZES.index),
                        "num_envs": sorted({case["num_envs"] for case in cases}), "hardware": ["CPU", "GPU"]},
            "cases": cases}


# THE PAGES: a folder of markdown laid out as the repository is, so that its relative links hold
def answer_section(readme: str) -> str:
    """The README's '## The answer' section, up to the next second-level heading."""
    match = re.search(r"^## The answer\n(.*?)(?=^## )", readme, re.S | re.M)
    if not match:
        raise SiteError("README.md holds no '## The answer' section")
    return match[1].strip()


def index_page(readme: str, has_figure: bool) -> str:
    """The home page: the headline figure (where tools/derive.py has made it and the answer does not show it
    already), the README's answer and a link to the explorer."""
    title = readme.split("\n", 1)[0].lstrip("# ")
    answer = answer_section(readme)
    figure = (f"![each design's ratio to the fastest, case by case]({FIGURE})\n\n"
              if has_figure and FIGURE not in answer else "")
    return (f"# {title}: the answer\n\n{figure}Your own case, ranked as measured: [the answer explorer](explorer.md)."
            f"\n\n{answer}\n")


def machine_lines(folder: str) -> list:
    """A sitting's machine: its system.json's, else its command set's plan (EXP.json), else none (its report's
    header names it)."""
    path = os.path.join(folder, "system.json")
    if os.path.isfile(path):
        with open(path) as file:
            system = json.load(file)
        packages = ", ".join(f"{name} {version}" for name, version in (system.get("packages") or {}).items())
        return ["| machine | |", "| --- | --- |", f"| CPU | {cpu_name(system)}, {system.get('cpu_count')} cores |",
                f"| GPU | {gpu_model(system) or 'none'} |", f"| date | {system.get('date')} |",
                f"| Python | {system.get('python')} |", f"| packages | {packages} |",
                f"| commit | {system.get('git_commit')} |"]
    plans = [name for name in sorted(os.listdir(folder)) if re.fullmatch(r"exp\d+\.json", name)]
    if not plans:
        return ["Its report's header names the machine."]
    with open(os.path.join(folder, plans[0])) as file:
        plan = json.load(file)
    return ["| machine | |", "| --- | --- |", f"| CPU | {plan_machine(plan)} |",
            f"| date | {plan.get('date', 'not recorded')} |", f"| commit | {plan.get('commit', 'not recorded')} |"]


def shown_charts(folder: str, reports: list) -> set:
    """The charts (paths relative to the sitting's folder) that its reports show; reports: (path, text) pairs."""
    return {os.path.normpath(os.path.join(os.path.dirname(path), target)) for path, text in reports
            for target in re.findall(r"\]\(([^)\s]+\.png)\)", text)}


def charts_lines(folder: str, reports: list) -> list:
    """Every chart of the sitting's folder that none of its reports shows, under the subfolder that holds it."""
    shown = shown_charts(folder, reports)
    lines, heading = [], None
    for path in sorted(chart_paths(folder)):
        if path in shown:
            continue
        if os.path.dirname(path) != heading:
            heading = os.path.dirname(path)
            lines += ["", f"### {heading or 'the sitting'}", ""]
        lines.append(f"![{path}]({path})")
    return lines


def chart_paths(folder: str) -> list:
    """The sitting's PNGs, relative to its folder."""
    return [os.path.relpath(os.path.join(top, name), folder) for top, _, names in os.walk(folder)
            for name in names if name.endswith(".png")]


def sitting_reports(folder: str) -> list:
    """(path relative to the folder, text) of each REPORT.md in the sitting's folder: its own first, then its
    studies'."""
    paths = sorted(os.path.relpath(os.path.join(top, "REPORT.md"), folder) for top, _, names in os.walk(folder)
                   if "REPORT.md" in names)
    reports = []
    for path in sorted(paths, key=lambda path: (path != "REPORT.md", path)):
        with open(os.path.join(folder, path)) as file:
            reports.append((path, file.read()))
    return reports


def sitting_page(folder: str, reports: list) -> str:
    """The sitting's REPORT.md, then its machine, then the charts of its folder that no report of it shows."""
    charts = charts_lines(folder, reports)
    return "\n".join([reports[0][1].rstrip(), "", "## The machine (the site's)", "", *machine_lines(folder),
                      *(["", "## The folder's other charts (the site's)", *charts] if charts else []), ""])


def linked_files(text: str, page_dir: str, root: str) -> set:
    """The repository's files other than markdown and images that a page links to (a template, a CSV)."""
    targets = set()
    for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)", text):
        path = os.path.normpath(os.path.join(page_dir, target))
        if not target.startswith(("http:", "https:")) and not path.endswith((".md", ".png")) and \
                os.path.isfile(os.path.join(root, path)):
            targets.add(path)
    return targets


def without_absent_links(text: str, page_dir: str, root: str) -> str:
    """The page with each link to a file absent from the repository (a run's file the repository ignores) turned
    into its text, marked as not committed."""
    def replace(match: re.Match) -> str:
        target = match[2].split("#")[0]
        if target.startswith(("http:", "https:", "#")) or os.path.exists(os.path.join(root, page_dir, target)):
            return match[0]
        return f"{match[1]} (not committed)"
    return re.sub(r"\[([^\]]*)\]\(([^)\s]+)\)", replace, text)


def write(path: str, text: str):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as file:
        file.write(text)


def copy(source: str, target: str):
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy(source, target)


def stage(root: str, pages: str) -> list:
    """The site's markdown and files laid out under pages as the repository lays them out; the nav."""
    results = os.path.join(root, "results")
    write(os.path.join(pages, "explorer.md"), EXPLORER_PAGE)
    write(os.path.join(pages, "explorer.json"), json.dumps(explorer_data(results), indent=1) + "\n")
    for path in EXPLORER_FILES:
        copy(path, os.path.join(pages, os.path.basename(path)))
    shutil.copytree(os.path.join(root, "docs"), os.path.join(pages, "docs"))
    with open(os.path.join(root, "README.md")) as file:
        write(os.path.join(pages, "index.md"), index_page(file.read(), os.path.isfile(os.path.join(pages, FIGURE))))
    docs = sorted(name for name in os.listdir(os.path.join(root, "docs")) if name.endswith(".md"))
    sittings = sorted(name for name in os.listdir(results) if os.path.isfile(os.path.join(results, name, "REPORT.md")))
    linked = set()
    for name in docs:
        with open(os.path.join(root, "docs", name)) as file:
            linked |= linked_files(file.read(), "docs", root)
    for name in sittings:
        folder = os.path.join(results, name)
        page_dir = os.path.join("results", name)
        reports = [(path, without_absent_links(text, os.path.join(page_dir, os.path.dirname(path)), root))
                   for path, text in sitting_reports(folder)]
        write(os.path.join(pages, "results", name, "REPORT.md"), sitting_page(folder, reports))
        for path, text in reports[1:]:
            write(os.path.join(pages, "results", name, path), text)
        for path, text in reports:
            linked |= linked_files(text, os.path.join(page_dir, os.path.dirname(path)), root)
        for path in chart_paths(folder):
            copy(os.path.join(folder, path), os.path.join(pages, "results", name, path))
    for path in linked:
        copy(os.path.join(root, path), os.path.join(pages, path))
    return [{"The answer": "index.md"}, {"Answer explorer": "explorer.md"},
            {"Docs": [{name.removesuffix(".md"): f"docs/{name}"} for name in docs]},
            {"Sittings": [{name: f"results/{name}/REPORT.md"} for name in sittings]}]


def github_slug(value: str, separator: str) -> str:
    """Headings' anchors as GitHub writes them (report/text.py's slug), so that the reports' links hold."""
    return slug(value)


def build(root: str, out: str):
    """Stages the pages in a temporary folder and builds them with mkdocs-material into out."""
    try:
        from mkdocs.commands.build import build as mkdocs_build
        from mkdocs.config import load_config
        from mkdocs.exceptions import Abort
        import material  # noqa: F401 (the theme's presence)
    except ImportError:
        raise SiteError("mkdocs-material is not installed: pip install -r requirements-site.txt -c requirements.txt")
    if os.path.exists(out) and not os.path.isdir(out):
        raise SiteError(f"{out} is a file: choose a folder")
    if os.path.exists(out) and os.listdir(out) and not os.path.exists(os.path.join(out, MARKER)):
        raise SiteError(f"{out} is not empty and holds no site built here: choose an empty or new folder")
    with tempfile.TemporaryDirectory() as staging:
        pages = os.path.join(staging, "pages")
        nav = stage(root, pages)
        write(os.path.join(staging, "mkdocs.yml"), "site_name: 'benchback: results'\n")  # the rest passed here
        config = load_config(config_file=os.path.join(staging, "mkdocs.yml"), docs_dir=pages,
                             site_dir=os.path.abspath(out), nav=nav, use_directory_urls=False, strict=True,
                             theme={"name": "material", "font": False, "features": ["navigation.sections"]},
                             extra={"generator": False}, extra_css=["explorer.css"],
                             plugins=[], markdown_extensions=["tables", {"toc": {"slugify": github_slug}}],
                             validation={"links": {"anchors": "warn", "unrecognized_links": "warn"}})
        warnings = logging.StreamHandler()
        warnings.setLevel(logging.WARNING)
        logging.getLogger("mkdocs").addHandler(warnings)  # strict mode stops on any warning: say which
        try:
            mkdocs_build(config)
        except Abort as error:
            raise SiteError(f"mkdocs stopped: {error}")
        finally:
            logging.getLogger("mkdocs").removeHandler(warnings)
    write(os.path.join(out, MARKER), "built by python -m report.site\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the folder to build the site into (new, empty, or a site built here)")
    args = parser.parse_args(argv)
    try:
        build(ROOT, args.out)
    except SiteError as error:
        fail(str(error))
    print(f"built {args.out}: serve it with python -m http.server -d {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
