"""The frozen front doors: every name HELM stores or a user types still resolves (names.py).

A suite written by an earlier release is summarized, reported and re-run by importing these; if one
moved, that suite would break (tests/e2e/test_old_suite.py checks such a suite end to end).
"""

from __future__ import annotations

import configparser
import importlib
import importlib.util
from pathlib import Path

import pytest

from helm_mtsamples_ext import names

pytestmark = pytest.mark.helm

REPO = Path(__file__).resolve().parents[1]


def resolve(path: str, sep: str = ".") -> object:
    module, _, attr = path.rpartition(sep)
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("class_path", names.STORED_CLASSES)
def test_every_stored_class_path_imports(class_path: str) -> None:
    assert isinstance(resolve(class_path), type)


def test_the_run_spec_function_imports_and_is_what_the_plugin_registers() -> None:
    from helm.benchmark import run_spec as helm_run_spec

    importlib.import_module(names.PLUGIN_MODULE)
    assert helm_run_spec._REGISTERED_RUN_SPEC_FUNCTIONS[names.RUN_ENTRY] is resolve(names.RUN_SPEC_FUNCTION)


def test_the_run_spec_stores_exactly_the_frozen_class_paths() -> None:
    from helm_mtsamples_ext.run_spec import run_entry

    spec = run_entry(judges="openai/gpt-4o-mini")
    stored = {spec.scenario_spec.class_name, *(a.class_name for a in spec.annotators or [])}
    stored |= {m.class_name for m in spec.metric_specs if m.class_name.startswith("helm_mtsamples_ext")}
    assert stored == {names.SCENARIO_CLASS, names.ANNOTATOR_CLASS, names.METRIC_CLASS}


def read_setup_cfg() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    return cfg


def test_setup_cfg_names_the_frozen_plugin_and_console_scripts() -> None:
    entry_points = read_setup_cfg()["options.entry_points"]
    assert f"{names.RUN_ENTRY} = {names.PLUGIN_MODULE}" in entry_points["helm"]
    for script, target in names.CONSOLE_SCRIPTS.items():
        assert f"{script} = {target}" in entry_points["console_scripts"]
        assert callable(resolve(target, sep=":"))


@pytest.mark.parametrize("module", names.MODULE_COMMANDS)
def test_every_python_m_command_is_runnable(module: str) -> None:
    spec = importlib.util.find_spec(module)
    assert spec is not None
    if spec.submodule_search_locations:  # a package runs its __main__
        assert importlib.util.find_spec(f"{module}.__main__") is not None
    else:
        assert "__main__" in Path(spec.origin or "").read_text()


def test_the_correct_tag_is_helms() -> None:
    """The report reads references by our copy of HELM's tag: a HELM that renamed it would leave none correct."""
    from helm.benchmark.scenarios.scenario import CORRECT_TAG

    assert names.CORRECT_TAG == CORRECT_TAG
