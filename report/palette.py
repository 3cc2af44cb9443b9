"""The one look of every chart: a colour and a marker per variant label (a design keeps both in every chart of every
report), and the rule for any other series (ways of searching, envs, sweeps, study seeds).

A label's colour is the registry's (sweep/variants.py: one hue per framework, darker = more compiled); its marker says
what steps the env, the language a user's env is written in: JAX (gymnax, Brax) a circle, NumPy (Gymnasium) a square,
torch a triangle, C++ (ALE) a diamond. A series that is no variant label takes OTHER_COLORS in order, hues no label
uses, so that it is never read as a framework.
"""
import itertools

from sweep import variants

# Variant/compile-mode labels in display order (the tables' order too), with their colours.
LABEL_COLORS = {row.label: row.color for row in variants.VARIANTS}

OTHER_COLORS = ("#6a3d9a", "#e7298a", "#bcbd22", "#7f7f7f", "#cab2d6", "#b15928")  # hues no variant label uses

BACKEND_MARKERS = {variants.GYMNAX: "o", variants.GYMNASIUM: "s", variants.TORCH_ENV: "^", variants.ALE: "D"}
BACKEND_NAMES = {variants.GYMNAX: "JAX env", variants.GYMNASIUM: "NumPy env", variants.TORCH_ENV: "torch env",
                 variants.ALE: "C++ env"}
OTHER_MARKER = "o"  # a series that is no variant label


def base_label(name: str) -> str:
    """The variant label a series is drawn for: A of a comparison 'A over B', else the name itself."""
    return name.split(" over ")[0]


def color_of(name: str) -> str | None:
    """The colour of a variant label (or of a comparison 'A over B': A's); None for any other series."""
    return LABEL_COLORS.get(base_label(name))


def marker_of(name: str) -> str:
    """The marker of a variant label (or 'A over B': A's), by what steps its env; OTHER_MARKER for any other series."""
    row = variants.BY_LABEL.get(base_label(name))
    return BACKEND_MARKERS[row.backend] if row else OTHER_MARKER


def colors_for(names) -> dict:
    """{name: colour}: a variant label's (a comparison 'A over B': A's) fixed colour; any other series the next of
    OTHER_COLORS, in the order given."""
    others = itertools.cycle(OTHER_COLORS)
    return {name: color_of(name) or next(others) for name in names}


def other_colors(names) -> dict:
    """{name: colour} for series that are no variant label (ways, envs, study seeds), OTHER_COLORS in order."""
    return dict(zip(names, itertools.cycle(OTHER_COLORS)))


def edge_color(name: str) -> str | None:
    """B's colour for a comparison 'A over B' (the points' outline), else None."""
    return LABEL_COLORS.get(name.split(" over ")[1]) if " over " in name else None


def script_colors(scripts: dict) -> dict:
    """{series: colour} for series drawn by scripts ({series: its script, with or without .py}): the colour of the
    script's default row where each script draws one series, so that a design keeps its colour; OTHER_COLORS in order
    where a script draws several series or the registry lacks one."""
    defaults = {row.script: row.color for row in variants.VARIANTS if not row.flags}
    found = [defaults.get(script.removesuffix(".py")) for script in scripts.values()]
    if None in found or len(set(found)) < len(found):
        return other_colors(scripts)
    return dict(zip(scripts, found))
