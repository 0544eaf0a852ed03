"""run_entry_args.py: the run entry's arguments, typed, with their defaults written once in the package."""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pytest

import helm_mtsamples_ext
from helm_mtsamples_ext.annotator import JudgeAnnotator
from helm_mtsamples_ext.common.helm_paths import LOCAL_PATH, OUTPUT_PATH
from helm_mtsamples_ext.common.run_entry_args import (
    _PARSERS,
    ANNOTATOR_ALWAYS,
    ANNOTATOR_IF_SET,
    DEFAULT_JUDGES,
    RunEntryArgs,
    door_arguments,
    door_signature,
    run_entry_parameters,
)
from helm_mtsamples_ext.data.notes import DOOR_CACHE_DIR
from helm_mtsamples_ext.judges.core.settings import CallSettings

pytestmark = pytest.mark.helm

PACKAGE = Path(helm_mtsamples_ext.__file__).parent


def test_every_argument_has_a_parser_and_parsing_nothing_gives_the_defaults() -> None:
    assert set(_PARSERS) == {f.name for f in fields(RunEntryArgs)}
    assert RunEntryArgs.parse() == RunEntryArgs()


def test_parsing_the_defaults_as_text_gives_the_defaults() -> None:
    """What run_spec.json stores (and a run entry's text) reads back to the same value, so a stored annotator
    argument and the default it was written from never differ."""
    text = {f.name: str(getattr(RunEntryArgs(), f.name)) for f in fields(RunEntryArgs) if f.name != "judges"}
    text = {k: v for k, v in text.items() if v != "None"}
    assert RunEntryArgs.parse(**text) == RunEntryArgs()


def test_earlier_runs_annotator_arguments_are_stored_as_before() -> None:
    """The first release stored judge_prompt, use_think and judge_timeout; later arguments only off their default."""
    assert RunEntryArgs().annotator_args() == {"judge_prompt": "prefix", "use_think": False, "judge_timeout": 120.0}
    assert RunEntryArgs(judge_max_wait=60.0).annotator_args()["judge_max_wait"] == 60.0
    assert RunEntryArgs().metric_args() == {}


def test_the_annotator_takes_every_stored_argument_with_the_run_entrys_default() -> None:
    """A default written twice can drift: the annotator's are read from RunEntryArgs, and this holds them equal."""
    parameters = inspect.signature(JudgeAnnotator.__init__).parameters
    default = RunEntryArgs()
    for name in (*ANNOTATOR_ALWAYS, *ANNOTATOR_IF_SET):
        assert parameters[name].default == getattr(default, name), name
    assert parameters["max_tokens"].default == CallSettings.max_tokens
    assert parameters["retry_base"].default == CallSettings.retry_base


LITERAL_TYPES = (int, float, str)
"""The defaults the check reads: numbers and strings (a bool or None says too little to be a default's copy)."""


def _literal_bindings(tree: ast.AST) -> list[tuple[str, object, int]]:
    """(name, value, line) of every number or string literal bound to a name: a parameter default, a keyword
    argument, a class attribute or an assignment."""
    found: list[tuple[str, object, int]] = []

    def add(name: str, value: ast.expr | None) -> None:
        if isinstance(value, ast.Constant) and type(value.value) in LITERAL_TYPES:
            found.append((name, value.value, value.lineno))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = [*node.args.posonlyargs, *node.args.args]
            defaulted = positional[len(positional) - len(node.args.defaults) :]
            for arg, value in zip(defaulted, node.args.defaults, strict=True):
                add(arg.arg, value)
            for arg, kw_value in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True):
                add(arg.arg, kw_value)
        elif isinstance(node, ast.keyword) and node.arg:
            add(node.arg, node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            add(node.target.id, node.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    add(target.id, node.value)
    return found


SETTINGS = {
    **{f.name: f.name for f in fields(CallSettings)},
    **{f.name: f.name for f in fields(RunEntryArgs)},
    **{f.name.removeprefix("judge_"): f.name for f in fields(RunEntryArgs) if f.name.startswith("judge_")},
}
"""Every name a judging setting goes by: its run-entry name, its call-settings name (judge_timeout is timeout)."""


def written(package: Path, names: Callable[[str], bool], default: object) -> list[str]:
    """Where ``default`` is bound, as a literal, to a name ``names`` accepts, in every module under ``package``."""
    return [
        f"{path.relative_to(package)}:{line} {name}={value!r}"
        for path in sorted(package.rglob("*.py"))
        for name, value, line in _literal_bindings(ast.parse(path.read_text(encoding="utf-8")))
        if names(name) and value == default and type(value) is type(default)
    ]


def _default(setting: str) -> object:
    return next(f.default for cls in (RunEntryArgs, CallSettings) for f in fields(cls) if f.name == setting)


@pytest.mark.parametrize(
    "setting",
    [f.name for f in fields(RunEntryArgs) if type(f.default) in LITERAL_TYPES]
    + [f.name for f in fields(CallSettings) if type(f.default) in LITERAL_TYPES],
)
def test_a_settings_default_is_written_once_in_the_package(setting: str) -> None:
    """judge_timeout=120, judge_max_wait=900, judge_max_concurrency=16 were each written three times (run_spec,
    annotator, CallSettings), extraction="helm" four times. Now every default is a literal in RunEntryArgs or
    CallSettings only, and everything else reads it from there."""
    found = written(PACKAGE, lambda name: SETTINGS.get(name) == setting, _default(setting))
    assert len(found) == 1, found


def test_the_default_panel_is_written_once_in_the_package() -> None:
    """DEFAULT_JUDGES' value is bound to a name once (run_entry_args.py, with the other defaults): the doors read it."""
    found = written(PACKAGE, lambda name: True, DEFAULT_JUDGES)
    line = found[0].split(":")[1].split()[0]
    assert found == [f"common/run_entry_args.py:{line} DEFAULT_JUDGES={DEFAULT_JUDGES!r}"], found


def test_the_check_fails_on_a_string_default_written_twice(tmp_path: Path) -> None:
    """A planted copy of a string default (and of the default panel) in another module is found, with its line."""
    (tmp_path / "args.py").write_text('class Args:\n    extraction: str = "helm"\n', encoding="utf-8")
    (tmp_path / "door.py").write_text(
        f'def build(notes, extraction="helm", judges={DEFAULT_JUDGES!r}):\n    return notes\n', encoding="utf-8"
    )
    assert written(tmp_path, lambda name: SETTINGS.get(name) == "extraction", "helm") == [
        "args.py:2 extraction='helm'",
        "door.py:1 extraction='helm'",
    ]
    assert len(written(tmp_path, lambda name: True, DEFAULT_JUDGES)) == 1
    assert written(tmp_path, lambda name: SETTINGS.get(name) == "extraction", "sections") == []


def _aliases(tree: ast.AST) -> list[str]:
    """Module-level ``NAME = names.CONSTANT`` assignments."""
    body = tree.body if isinstance(tree, ast.Module) else []
    return [
        f"{target.id} = names.{node.value.attr}"
        for node in body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "names"
        for target in node.targets
        if isinstance(target, ast.Name)
    ]


def test_no_module_keeps_a_local_alias_of_a_names_constant() -> None:
    """A frozen name has one spelling: ``names.ANNOTATION_KEY`` where it is used, never a copy under another name
    that a reader must trace back (and that a rename in one place would let drift)."""
    found = [
        f"{path.relative_to(PACKAGE)}: {alias}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "names.py"
        for alias in _aliases(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def constants(package: Path, value: str) -> list[str]:
    """Where the string ``value`` is written as a whole literal (a default, an argument, a path's part), in every
    module under ``package``."""
    return [
        f"{path.relative_to(package)}:{node.lineno}"
        for path in sorted(package.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == value
    ]


@pytest.mark.parametrize(
    ("value", "home"),
    [
        (OUTPUT_PATH, "common/helm_paths.py"),
        (LOCAL_PATH, "common/helm_paths.py"),
        (DOOR_CACHE_DIR, "data/notes.py"),
    ],
)
def test_helms_paths_are_written_once_in_the_package(value: str, home: str) -> None:
    """``"benchmark_output"`` was written 8 times (each command's ``-o`` default, the model check, the controls'
    notes), ``"prod_env"`` 7 and the doors' notes cache twice: each is a literal in its home only."""
    found = constants(PACKAGE, value)
    assert len(found) == 1 and found[0].startswith(f"{home}:"), found


def test_the_path_check_finds_a_planted_copy(tmp_path: Path) -> None:
    (tmp_path / "cli.py").write_text('parser.add_argument("-o", default="benchmark_output")\n', encoding="utf-8")
    (tmp_path / "keys.py").write_text('LOCAL = Path("prod_env") / "credentials.conf"\n', encoding="utf-8")
    assert constants(tmp_path, OUTPUT_PATH) == ["cli.py:1"]
    assert constants(tmp_path, LOCAL_PATH) == ["keys.py:1"]


def test_a_doors_run_entry_parameters_are_run_entry_args_own() -> None:
    """A door's parameter for a run-entry argument carries RunEntryArgs' name, default and type, written nowhere
    else; the door reads its call by name, each missing argument at its default, as Python would."""

    @door_signature(
        inspect.Parameter("panel", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="a", annotation=str),
        *run_entry_parameters("use_think", "judge_timeout", "explanation_cap"),
        inspect.Parameter("rest", inspect.Parameter.VAR_KEYWORD),
    )
    def door(*args: object, **kwargs: object) -> dict[str, object]:
        return door_arguments(door, *args, **kwargs)

    parameters = inspect.signature(door).parameters
    assert list(parameters) == ["panel", "use_think", "judge_timeout", "explanation_cap", "rest"]
    assert parameters["judge_timeout"].default == RunEntryArgs.judge_timeout
    assert typing.get_type_hints(door)["explanation_cap"] == int | None
    assert door("b", judge_timeout=5, other=1) == {
        "panel": "b",
        "use_think": False,
        "judge_timeout": 5,
        "explanation_cap": None,
        "rest": {"other": 1},
    }
    with pytest.raises(TypeError):
        door("b", panel="c")
