"""Markdown and numbers in words: what every section writes with."""

import math
import re
import statistics
import unicodedata
from typing import NamedTuple

import numpy as np

from report.settings import METRIC_WINDOWS, WINDOWS
from report.stats import distinguishable, geometric_mean, interval, inverted, median, median_interval


class Answer(NamedTuple):
    """What an answer section returns: its markdown lines, and the short bullets that summarise it under 'The answer'
    at the top of the report, each (label, text): the label names the experiment and the part (e.g. '<exp> · small'),
    the text the finding with its numbers written by the same helpers as the section's own tables and conclusions.
    main.py links each bullet to the section's heading (its first line)."""

    lines: list
    bullets: list


def slug(title):
    """GitHub's anchor for a heading's text: lower case, every character but letters, digits, marks, '_', '-' and
    spaces dropped, spaces turned to '-' ('Which variant is fastest? (linen)' -> 'which-variant-is-fastest-linen')."""
    kept = [char for char in title.strip().lower()
            if char in " -" or unicodedata.category(char)[0] in "LMN" or unicodedata.category(char) == "Pc"]
    return "".join(kept).replace(" ", "-")


def heading_anchors(lines):
    """{heading text: its anchor} of the markdown lines' headings (# to ######), repeats numbered as GitHub numbers
    them (github-slugger: the second heading of slug 'a' gets 'a-1', the third 'a-2'); a text that heads twice maps
    to its first anchor."""
    occurrences, anchors = {}, {}
    for line in lines:
        match = re.match(r"#{1,6} (.+)", line)
        if not match:
            continue
        base = anchor = slug(match.group(1))
        while anchor in occurrences:
            occurrences[base] += 1
            anchor = f"{base}-{occurrences[base]}"
        occurrences[anchor] = 0
        anchors.setdefault(match.group(1).strip(), anchor)
    return anchors


def heading(sweep, title, level="##"):
    """A section heading; in the part of one machine kind of a sweep of several, it names the kind."""
    return f"{level} {title}" + (f" — {sweep.machine}" if sweep.machine else "")


def markdown_table(header, rows):
    """Markdown table lines for a header and rows of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def number_text(value):
    """A number with three significant digits, whole from 100 up (never an exponent there): 0.0123, 4.56, 1,234."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def seconds_text(value):
    """Seconds as number_text gives them, '–' for NaN."""
    return "–" if math.isnan(value) else number_text(value)


def seconds_interval_text(value, bounds):
    """Seconds as seconds_text gives them, then ' [range 0.9–1.1]' or ' [95% CI 0.9–1.1]' where the interval is
    known."""
    low, high, kind = bounds
    known = not math.isnan(value) and not math.isnan(low)
    return seconds_text(value) + (f" [{kind} {number_text(low)}–{number_text(high)}]" if known else "")


def speedup_text(value, bounds=(math.nan, math.nan, "")):
    """A speedup like '2.00×', then ' [95% CI 1.80–2.20]' or ' [range 1.80–2.20]' when known; '–' for NaN."""
    if math.isnan(value):
        return "–"
    low, high, kind = bounds
    return f"{value:.2f}×" + ("" if math.isnan(low) else f" [{kind} {low:.2f}–{high:.2f}]")


def mean_and_spread(values):
    """'mean ± sample std' of values with three significant digits; the mean alone for one value, '–' for none."""
    if len(values) < 2:
        return f"{values[0]:.3g}" if values else "–"
    return f"{np.mean(values):.3g} ± {np.std(values, ddof=1):.2g}"


def image(name, caption):
    """Markdown lines embedding a chart."""
    return [f"![{caption}]({name})", ""]


def empty_window_lines(rows, metrics):
    """One line naming the windows of metrics that some of the rows' runs end before; none when every run reaches them."""
    parts = []
    for window in dict.fromkeys(METRIC_WINDOWS[metric] for metric in metrics if metric in METRIC_WINDOWS):
        first = WINDOWS[window][0]
        short = [row for row in rows if row["num_iterations"] <= first]
        if short:
            lengths = "/".join(map(str, sorted({row["num_iterations"] for row in short})))
            share = "every run" if len(short) == len(rows) else f"{len(short)} of {len(rows)} runs"
            plural = "" if lengths == "1" else "s"
            parts.append(f"{window} is empty in {share} (runs of {lengths} iteration{plural} end before iteration {first})")
    if not parts:
        return []
    return [f"*Empty windows:* {'; '.join(parts)}; figures over an empty window are left out ('–' in tables).", ""]


def speedup_table(groups):
    """Markdown table of geometric-mean and median speedups with their intervals for [(group, A, B, pairs)]."""
    lines = []
    for group, label_a, label_b, pairs in groups:
        speedups = [pair.speedup for pair in pairs]
        envs = len({pair.condition.env for pair in pairs})
        lines.append([
            group, f"{label_a} over {label_b}", len(pairs), envs,
            speedup_text(geometric_mean(speedups), interval(pairs)),
            speedup_text(median(speedups), median_interval(pairs)),
        ])
    header = ["model size", "speedup of A over B", "pairs", "envs", "geometric mean [interval]", "median [interval]"]
    return markdown_table(header, lines)


def listed(names):
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def lead_names(lead, name, most=None):
    """The names an answer puts first by a Lead (stats.level_with_first): its first's, and those level with it: 'a',
    'a and b'; more than most: 'a and 4 others'."""
    if most and len(lead.level) >= most:
        return f"{name(lead.first)} and {len(lead.level)} others"
    return listed([name(item) for item in (lead.first, *lead.level)])


def lead_note(lead, name, overlap, unit):
    """Why an answer does not name a Lead's first alone, '' where it may: overlap where some are level with it ('' to
    leave it unsaid), and 'one {unit}: no interval' where some have none (naming them where others have one)."""
    notes = [overlap] if lead.level and overlap else []
    if lead.unknown:
        whom = f" to tell from {listed([name(item) for item in lead.unknown])}" if lead.level or lead.apart else ""
        notes.append(f"one {unit}: no interval{whom}")
    return "; ".join(notes)


def relative_text(value):
    """A relative time like '1.09× [range 0.97–1.21]'; '1 (fastest)' for the fastest itself."""
    mean, bounds = value
    itself = mean == 1 and (math.isnan(bounds[0]) or bounds[0] == bounds[1] == 1)
    return "1 (fastest)" if itself else speedup_text(mean, bounds)


def ratio_words(value, slower, faster):
    """'Gymnasium takes 3.10× [range 2.90–3.30] the time of gymnax' (turned around below 1×), or that they tie."""
    if not distinguishable(value[1]):
        reason = "one env: no interval, " if math.isnan(value[1][0]) else ""
        return f"{slower} and {faster} are not told apart ({reason}{slower} / {faster}: {speedup_text(*value)})"
    if value[0] >= 1:
        return f"{slower} takes {speedup_text(*value)} the time of {faster}"
    return f"{faster} takes {speedup_text(*inverted(value))} the time of {slower}"


def percent_text(value, sign="+"):
    """A fraction as a percentage with one decimal ('+2.5%'; never '-0.0%'), '–' for NaN."""
    return "–" if math.isnan(value) else f"{round(value, 3) or 0.0:{sign}.1%}"


def mib_text(value):
    """Bytes in MiB without decimals, '–' for NaN."""
    return "–" if math.isnan(value) else f"{value / 2**20:,.0f}"


def memory_columns(cells, device=None):
    """The memory columns of a table whose rows are cells {name: its summary rows}: the header cells and {name: its
    cells}, the median over the rows of the host's peak RSS and, where device is true (by default: where any row
    logged one, as on a GPU), of the device's peak, in MiB."""
    rows = [row for cell in cells.values() for row in cell]
    if device is None:
        device = any(not math.isnan(row["peak_memory_bytes"]) for row in rows)
    metrics = ["peak_rss_bytes"] + ["peak_memory_bytes"] * device
    header = ["host peak RSS (MiB, median)"] + ["device peak (MiB, median)"] * device
    values = {name: [mib_text(float(median([row[metric] for row in cell]))) for metric in metrics]
              for name, cell in cells.items()}
    return header, values


def spread_text(values: list, text=number_text) -> str:
    """'median (min–max)' of the values known, with the count where some are missing; '–' for none."""
    known = [value for value in values if not math.isnan(value)]
    if not known:
        return "–"
    middle = text(statistics.median(known))
    if len(known) == 1:
        return middle + ("" if len(values) == 1 else f" (1 of {len(values)})")
    missing = "" if len(known) == len(values) else f", {len(known)} of {len(values)}"
    return f"{middle} ({text(min(known))}–{text(max(known))}{missing})"
