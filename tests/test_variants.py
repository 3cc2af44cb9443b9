"""The registry of variants (sweep/variants.py) is consistent with itself, with the scripts at the repository root (each
row's flags and every option it names are options of its script's Args), and docs/method.md's table of variants and
compile modes is the one it gives. No process is started: the scripts' Args are read with ast."""
import ast
import functools
import glob
import os
import re

import pytest

import derive
from helpers import ROOT
from report.settings import OTHER_COLORS
from sweep import variants
from sweep.variants import VARIANTS

METHOD = os.path.join(ROOT, "docs", "method.md")


@functools.cache
def script_options(file: str) -> dict:
    """{option name as typed, e.g. '--no-jit', '--vectorization': the values it takes (None: any, or a flag)} of the
    script's Args dataclass, as tyro makes them: a bool field both --x and --no-x, a Literal field its values."""
    with open(os.path.join(ROOT, file)) as f:
        tree = ast.parse(f.read())
    args = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Args")
    options = {}
    for field in args.body:
        if not (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)):
            continue
        name, annotation = "--" + field.target.id.replace("_", "-"), field.annotation
        if isinstance(annotation, ast.Name) and annotation.id == "bool":
            options[name] = options["--no-" + name[2:]] = ()
        elif isinstance(annotation, ast.Subscript) and getattr(annotation.value, "id", None) == "Literal":
            elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            options[name] = tuple(element.value for element in elements)
        else:
            options[name] = None
    return options


def refused_flags(file: str, flags: tuple) -> list:
    """The flags (and values) of `flags` that the script's Args does not take: [] when it takes them all."""
    options, refused, index = script_options(file), [], 0
    while index < len(flags):
        flag = flags[index]
        if flag not in options:
            refused.append(flag)
        elif options[flag] != ():  # an option with a value: the next token, one of its Literal's if it has one
            value = flags[index + 1] if index + 1 < len(flags) else None
            if value is None or (options[flag] is not None and value not in options[flag]):
                refused.append(f"{flag} {value}")
            index += 1
        index += 1
    return refused


# THE REGISTRY
def test_labels_keys_and_colours_are_unique_and_no_colour_is_one_the_report_keeps_for_others():
    assert len(variants.BY_LABEL) == len(variants.BY_KEY) == len(VARIANTS)
    colors = [row.color.lower() for row in VARIANTS]
    assert len(set(colors)) == len(colors), [color for color in colors if colors.count(color) > 1]
    assert not set(colors) & {color.lower() for color in OTHER_COLORS}
    assert all(re.fullmatch(r"#[0-9a-f]{6}", color) for color in colors), colors
    assert set(variants.FULLY_COMPILED) <= set(VARIANTS)
    assert all(variants.variant(row.script, row.mode) is row for row in VARIANTS)


def test_every_baseline_and_analogue_is_a_label_and_every_analogue_points_back():
    for row in VARIANTS:
        if row.baseline:
            base = variants.BY_LABEL[row.baseline]  # KeyError: no such label
            assert (base.algorithm, base.framework, base.backend) == (row.algorithm, row.framework, row.backend), row
            assert base is not row
        if row.analogue:
            other = variants.BY_LABEL[row.analogue]
            assert other.analogue == row.label, (row.label, other.label)
            assert other.algorithm != row.algorithm and (other.framework, other.backend) == (row.framework,
                                                                                           row.backend), row.label


def test_every_sibling_is_a_script_of_the_same_algorithm_and_leads_to_the_reference():
    for row in VARIANTS:
        assert row.sibling is None or row.sibling in variants.SCRIPTS, row.label
    for script in variants.SCRIPTS:
        rows = variants.of_script(script)
        assert len({row.sibling for row in rows}) == 1, script  # one sibling per script, whichever the mode
        seen, current = [script], rows[0].sibling
        while current:  # the chain of siblings ends at its algorithm's reference, without a loop
            assert current not in seen and variants.of_script(current)[0].algorithm == rows[0].algorithm, seen
            seen.append(current)
            current = variants.of_script(current)[0].sibling
    references = {row.algorithm: row.script for row in VARIANTS if row.sibling is None}
    assert sorted(references) == sorted([variants.DQN, variants.PPO, variants.PPO_CONTINUOUS, variants.PPO_ATARI])
    assert len({row.script for row in VARIANTS if row.sibling is None}) == 4


def test_each_script_has_one_default_row_and_each_design_one_variant_per_algorithm():
    for script in variants.SCRIPTS:
        assert len([row for row in variants.of_script(script) if not row.flags]) == 1, script
    designs = [(row.design, row.algorithm) for row in VARIANTS if row.design]
    assert len(set(designs)) == len(designs), designs
    assert set(variants.SCRIPTS) == {row.script for row in VARIANTS}
    assert {row.backend for row in VARIANTS} <= {variants.GYMNAX, variants.GYMNASIUM, variants.TORCH_ENV, variants.ALE}


def test_every_script_of_the_registry_is_at_the_root_and_every_script_at_the_root_in_the_registry():
    found = {os.path.basename(path) for pattern in ("ppo_*.py", "dqn_*.py") for path in glob.glob(os.path.join(ROOT,
                                                                                                                  pattern))}
    assert {row.file for row in VARIANTS} == found


@pytest.mark.parametrize("row", VARIANTS, ids=lambda row: row.label)
def test_each_rows_flags_are_options_of_its_script(row):
    assert not refused_flags(row.file, row.flags)
    if row.num_seeds:
        assert "--num-seeds" in script_options(row.file)


def test_the_flag_check_refuses_what_a_script_does_not_take():
    assert refused_flags(variants.LINEN.file, ("--no-jit", "--jit")) == []
    assert refused_flags(variants.LINEN.file, ("--no-such-flag",)) == ["--no-such-flag"]
    assert refused_flags(variants.LINEN_GYMNASIUM.file, ("--vectorization", "nowhere")) == ["--vectorization nowhere"]
    assert refused_flags(variants.LINEN_GYMNASIUM.file, ("--vectorization",)) == ["--vectorization None"]


# WHAT THE DOCS SAY: docs/method.md's table of variants and docs/ease-of-use.md are written from the rows
def test_what_the_docs_say_of_a_script_sits_on_its_default_row_and_every_option_named_is_one_it_takes():
    for row in VARIANTS:
        assert not row.flags or (row.compiled, row.options, row.unswept) == ("", (), ()), row.label
    for script in variants.SCRIPTS:
        default = variants.default_row(script)
        assert default.compiled and "|" not in default.compiled, script  # a cell of a markdown table
        for option in default.options:  # a placeholder value ("--num-seeds N") passes where the option takes any value
            assert not refused_flags(default.file, tuple(option.split())), (script, option)
        for mode, flags in default.unswept:  # the modes no sweep runs are eager ones, one flag each
            assert mode == "none" and len(flags) == 1 and not refused_flags(default.file, flags), (script, mode)
            assert (script, mode) not in variants.BY_KEY, script
    assert {row.script for row in VARIANTS if row.note} == set(variants.SCRIPTS)  # the ease-of-use page's rows
    assert not any("|" in row.note for row in VARIANTS)


def test_method_md_holds_the_variants_table_the_registry_gives():
    with open(METHOD) as f:
        text = f.read()
    assert derive.variants_text(text) == text, "docs/method.md's variants table is stale: run python tools/derive.py"
