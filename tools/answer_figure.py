"""The README's headline figure: each design's ratio to the fastest, one row per case a user chooses by.

The numbers are the README's answer tables' (tools/answer_table.py's ratios, imported, not computed again): per row a
column of those tables (a model size, a number of envs, DQN, a GPU, a search, continuous control, a CNN), each design
a point at its ratio to the fastest design of that row, its whiskers the least and greatest of its ratios over the
(env, seed) pairs or repeats that pair it with the fastest, where the sitting has more than one. A design keeps its colour in every row (the palette's colour of its
PPO script, report/palette.py); its marker says what its env is written in in that row (JAX, NumPy, torch, C++).
Each row names its sitting's CPU (or GPU). The render is byte for byte the same for the same numbers and code
(no date or version in the file), so that --check can compare it.

    python tools/answer_figure.py                 # write docs/img/answer.png
    python tools/answer_figure.py --check         # exit 1 if docs/img/answer.png is not what the sittings give now
"""
import argparse
import io
import math
import os
import sys
from typing import NamedTuple

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # the report's package, when run as tools/answer_figure.py
sys.path.insert(0, os.path.join(ROOT, "tools"))  # answer_table, when imported from elsewhere

import answer_table  # noqa: E402 (after the path)
from report.charts import log_axis  # noqa: E402
from report.palette import BACKEND_MARKERS, BACKEND_NAMES, color_of, marker_of  # noqa: E402

OUT = os.path.join("docs", "img", "answer.png")
WIDTH, DPI = 9.5, 110  # inches and dots per inch: about 1,000 pixels wide, the README's width
ROW_HEIGHT = 0.42  # inches per case


class Row(NamedTuple):
    """One case: its label and {design name: (variant label measured, Ratio)}."""
    label: str
    points: dict


def table_rows(results: str) -> list:
    """A Row per column of the answer tables (per iteration, a search, continuous control), in the tables' order."""
    rows = []
    for table in answer_table.TABLES:
        for column in table.columns:
            ratios, _ = answer_table.ratios_of(results, column)
            chosen = {design.name: answer_table.variant_of(design, column) for design in answer_table.DESIGNS}
            metric = "wall time of a search" if column in (answer_table.SEARCH, answer_table.POPULATION) else ""
            title = column.title if column.family != "ppo" or "search" in column.title else f"PPO, {column.title}"
            label = f"{title}{f' ({metric})' if metric else ''}\n{answer_table.column_cpu(results, column)}"
            rows.append(Row(label, {name: (chosen[name].label, ratio) for name, ratio in ratios.items()}))
    return rows


def cnn_rows(results: str) -> list:
    """A Row per convolutional case (exp14), its frameworks named as the designs whose PPO script is their first."""
    ratios, _, plan = answer_table.cnn_ratios(results)
    machine = answer_table.cpu_text({"cpu": plan.get("machine"), "cpu_details": plan.get("cpu_details")})
    design_of = {design.ppo.label: design.name for design in answer_table.DESIGNS if design.ppo}
    rows = []
    for case, title in answer_table.CNN_CASES:
        points = {}
        for _, scripts in answer_table.CNN_ROWS:
            label = next((row.label for row in scripts if row.label in ratios.get(case, {})), None)
            if label:
                points[design_of[scripts[0].label]] = (label, ratios[case][label])
        rows.append(Row(f"PPO, {title}\n{machine}", points))
    return rows


def design_labels() -> dict:
    """{design name: the label of its PPO script (else of its first script)}: the label whose colour it keeps."""
    return {design.name: next(row for row in (design.ppo, design.dqn, design.continuous) if row).label
            for design in answer_table.DESIGNS}


def draw(rows: list) -> Figure:
    """The figure: a band per row (case), each design a point at its ratio with its range, log x."""
    names = [design.name for design in answer_table.DESIGNS if any(design.name in row.points for row in rows)]
    labels = design_labels()
    colors = {name: color_of(label) for name, label in labels.items()}
    figure = Figure(figsize=(WIDTH, ROW_HEIGHT * len(rows) + 2.6), layout="constrained", dpi=DPI)
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    step = 0.8 / len(names)
    for y, row in enumerate(rows):
        for k, name in enumerate(names):
            if name not in row.points:
                continue
            label, ratio = row.points[name]
            # clipped: a geometric mean of equal ratios can lie a rounding error outside their range
            spread = (np.clip([[ratio.value - ratio.low], [ratio.high - ratio.value]], 0, None)
                      if not math.isnan(ratio.low) else None)
            ax.errorbar([ratio.value], [y + (k - (len(names) - 1) / 2) * step], xerr=spread, color=colors[name],
                        marker=marker_of(label), markersize=5, linestyle="none", elinewidth=1, capsize=1.5)
        if y % 2:
            ax.axhspan(y - 0.5, y + 0.5, color="0.95", zorder=0)
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [row.label for row in rows], fontsize=7.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    log_axis(ax, "x", "×")
    ax.set_xlabel("steady iteration (a search's row: its wall time) ÷ the fastest design's in that row "
                  "(×, log scale)")
    ax.grid(axis="x", which="major", alpha=0.3)
    handles = [Line2D([], [], color=colors[name], marker=marker_of(labels[name]), linestyle="none",
                      label=name.replace("`", ""))
               for name in names]
    handles += [Line2D([], [], color="0.3", marker=marker, linestyle="none", label=BACKEND_NAMES[backend])
                for backend, marker in BACKEND_MARKERS.items()]
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=7.5, frameon=False)
    figure.suptitle("Which design is fastest for your case? Each design's time relative to the fastest "
                    "(1× = fastest; whiskers: range over the envs, seeds or repeats run)", fontsize=9.5)
    return figure


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG, without the matplotlib version in its metadata, so that equal renders give equal bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="answer_figure.py", description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=os.path.join(ROOT, "results"), help="the folder of committed sweeps")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {OUT} is not what the sittings give now")
    args = parser.parse_args(argv)
    image = png_bytes(draw(table_rows(args.results) + cnn_rows(args.results)))
    path = os.path.join(ROOT, OUT)
    if args.check:
        current = open(path, "rb").read() if os.path.isfile(path) else b""
        if current != image:
            print(f"answer_figure.py: {OUT} is not the figure `python tools/answer_figure.py` draws now",
                  file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as file:
        file.write(image)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
