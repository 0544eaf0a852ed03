"""Every command in the ```bash blocks of README.md and docs/*.md works as written, read from those files (so a
new or changed command is covered, and one of a kind this test does not know fails it).

- "Run the tests": .ci/run runs its one line literally (read by .ci/readme_commands.py); here it is checked to install
  tox and run every environment of pyproject.toml's ``[tool.tox]``: a venv, extra and selection per HELM and per door.
- Every other block runs in its file's order (README.md, then each docs/*.md page as a sequence of its own) in a
  fresh directory (a checkout's run_specs/), with this environment's binaries standing in for a venv's, no key
  and no network: ``helm-run`` gets ``--dry-run`` (it calls no model and no judge), the notes are the session's
  synthetic ones (MTSAMPLES_PROCEDURES_BASE_URL and _MANIFEST, as a user with a mirror of their own sets them), a
  block's exports reach the blocks after it in the same file, ``helm-server`` runs on a free port until it
  answers. A venv, its activation and ``pip install`` are not re-run (the extras they name must exist), a
  third-party server's lines are checked to stay in a venv of their own, a synopsis (``[--option ...]``) is
  checked against ``--help``, and the Slurm manager's ``--runner-class-name`` is checked to import but not used
  (it would submit jobs).
"""

from __future__ import annotations

import configparser
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test venvs run Python 3.11
    import tomli as tomllib

import pytest

from tests.e2e.helm_tools import BIN, user_env, wait_until_serving
from tests.report.door_runs import write_inspect_log, write_verifiers_run
from tests.servers.loopback import free_port
from tests.synthetic_notes import SyntheticNotes

REPO = Path(__file__).resolve().parents[2]
TEST_VENVS = {".venv": "crfm", ".venv-medhelm": "medhelm"}
DOOR_VENVS = {".venv-verifiers": "verifiers", ".venv-inspect": "inspect"}
"""A door's venv: its extra and ``test``, no HELM (and no ``dev``: lint and types run beside the first HELM)."""
POSARGS = {"replace": "posargs", "extend": True}
TEST_RUNS = {
    "crfm": ["python", "-m", "pytest", POSARGS],
    "medhelm": ["python", "-m", "pytest", "-m", "helm or e2e", POSARGS],
    "verifiers": ["python", "-m", "pytest", "-m", "verifiers", {**POSARGS, "default": ["tests/doors/verifiers"]}],
    "inspect": ["python", "-m", "pytest", "-m", "inspect", {**POSARGS, "default": ["tests/doors/inspect"]}],
}
"""The first HELM runs the whole suite; the second only what touches a difference between them (the markers that
tests/collection_rules.py keeps true); a door's venv only its door's tests. Arguments after ``--`` reach pytest."""
LINT = [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["mypy"], ["lint-imports"]]


def _readme_commands() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_commands", REPO / ".ci" / "readme_commands.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("readme_commands", module)
    spec.loader.exec_module(module)
    return module


ci = _readme_commands()
BLOCKS = ci.bash_blocks()
TEST_BLOCK = ci.test_block()
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PAGE_BLOCKS = {page.relative_to(REPO).as_posix(): ci.bash_blocks(page.read_text(encoding="utf-8")) for page in PAGES}
"""Each page's ```bash blocks in order; README.md's are BLOCKS."""
OTHER_BLOCKS = [
    (page, i) for page, blocks in PAGE_BLOCKS.items() for i, block in enumerate(blocks) if block != TEST_BLOCK
]
"""(page, index) of every block but "Run the tests", which .ci/run runs."""


@dataclass(frozen=True)
class Step:
    kind: str  # venv, activate, install, export, door, helm-run, server, synopsis, run
    command: str  # as the README writes it, without a trailing comment


PATTERNS: tuple[tuple[str, str], ...] = (
    ("venv", r"python3 -m venv \S+"),
    ("activate", r"\. \S+/bin/activate"),
    ("install", r"(\S+/bin/)?pip install -e '\.\[[\w,]+\]'"),
    ("export", r"export \w+=\S+"),
    # a third-party server in a venv of its own (llama-cpp-python): checked to stay out of ours, not run (it compiles
    # for minutes and serves a model)
    ("tool", r"(\S+/bin/)?pip install (--no-deps )?'?[a-z][\w.-]*(\[\w+\])?'?"),
    ("tool", r"[A-Z_]+=\S.*"),
    ("tool", r"\S+/bin/python -m (?!helm_mtsamples_ext)\w[\w.]* .+"),
    # a door's command in the door's own venv (no HELM there): its own tests run it (tests/doors/<door>/), not this
    ("door", r"\.venv-verifiers/bin/(vf-eval|medarc-eval) .+"),
    ("helm-run", r"(helm-run|medhelm-run) .+"),
    # a door's command in its own venv (inspect-ai cannot share one with HELM): run as written, exports and all, by
    # tests/doors/inspect/test_readme_command.py, not here
    ("door", r"\S+/bin/inspect eval .+"),
    ("server", r"helm-server .+"),
    ("synopsis", r"helm-mtsamples-report .*\[.+"),
    ("run", r"(helm-summarize|helm-mtsamples-report|python -m helm_mtsamples_ext\.\w+) .+"),
)


def steps_of(command_line: str) -> list[Step]:
    """A README command line as steps (``&&``-joined commands apart); a command of no known kind fails."""
    steps = []
    for part in command_line.split(" && "):
        command = re.sub(r"\s+#\s.*$", "", part.strip())
        kind = next((k for k, pattern in PATTERNS if re.fullmatch(pattern, command)), None)
        assert kind, f"README command of a kind tests/e2e/test_readme_commands.py does not know; teach it: {command}"
        steps.append(Step(kind, command))
    return steps


def extras() -> set[str]:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    return set(config["options.extras_require"])


def tox_config() -> dict[str, Any]:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    tox: dict[str, Any] = tomllib.loads(text)["tool"]["tox"]
    return tox


def test_ci_runs_the_readmes_one_test_command_and_tox_runs_every_suite() -> None:
    """One line installs tox and runs every environment; each HELM and each door gets its venv (where the docs name
    it), its extra, and its selection, the second HELM running only the tests marked ``helm`` or ``e2e``; lint runs
    beside the first HELM, in a venv of its own; the doors run before the HELMs; .ci/run runs the line, installs and
    tests nothing itself."""
    (command,) = TEST_BLOCK.commands
    assert command == ci.test_command()
    tox_line = r"python3 -m venv (\S+) && \1/bin/pip install 'tox>=[\d.]+,<5' && \1/bin/tox "
    assert re.fullmatch(tox_line + "run-parallel -p all", command)
    tox = tox_config()
    envs: dict[str, dict[str, Any]] = tox["env"]
    assert sorted(tox["env_list"]) == sorted(envs) == sorted([*TEST_RUNS, "lint"])
    for venv, extra in {**TEST_VENVS, **DOOR_VENVS}.items():
        env = envs[extra]
        helm = venv in TEST_VENVS
        assert env["env_dir"] == "{tox_root}/" + venv
        ppi = ["ppi"] if extra == "crfm" else []  # the PPI authors' code checks the clinician scale, in one env
        assert sorted(env["extras"]) == sorted([extra, "test", *(["dev"] if helm else []), *ppi])
        assert env.get("constraints") == (["tests/constraints.txt"] if helm else None), "HELM venvs pin torch"
        assert env["commands"] == [TEST_RUNS[extra]]
        if helm:
            assert set(DOOR_VENVS.values()) <= set(env["depends"]), "the doors' env server races the e2e tests' ports"
    lint = envs["lint"]
    assert lint["commands"] == LINT
    crfm = envs["crfm"]  # lint checks the package as crfm's venv holds it, without the test-only ppi
    assert (lint["extras"], lint["constraints"]) == ([e for e in crfm["extras"] if e != "ppi"], crfm["constraints"])
    assert "env_dir" not in lint, "tox rebuilds a venv another environment used: lint's is its own"
    run = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in run if re.search(r"\b(pip|pytest|tox) ", line)], ".ci/run runs the README's line"
    assert any("python3 .ci/readme_commands.py" in line for line in run)


def test_the_run_command_has_a_venv_of_its_own() -> None:
    """Following the README in order never lays one HELM over the other: the run command's venv is not a test venv."""
    (first,) = BLOCKS[0].commands
    venv, activate, install, *rest = steps_of(first)
    name = venv.command.split()[-1]
    assert (venv.kind, activate.command, install.kind) == ("venv", f". {name}/bin/activate", "install")
    assert name not in TEST_VENVS and [s.kind for s in rest] == ["helm-run", "run", "run", "run"]


@pytest.mark.e2e
def test_a_missing_suite_stops_the_readmes_schema_and_summarize_chain_with_one_line(tmp_path: Path) -> None:
    """The schema command runs before helm-summarize, joined by ``&&`` (a failing ``$(...)`` inside an argument would
    not stop bash): on a suite that does not exist, one line and no helm-summarize traceback."""
    (first,) = BLOCKS[0].commands
    chain = [s.command for s in steps_of(first) if s.kind == "run"][:2]
    assert chain[0].startswith("python -m helm_mtsamples_ext.schema --suite ") and chain[1].startswith("helm-summarize")
    line = " && ".join(chain).replace("quick", "missing")
    proc = subprocess.run(
        ["bash", "-c", line], cwd=tmp_path, env=user_env(PATH=f"{BIN}:{user_env().get('PATH', '')}"),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in output
    assert output.strip().splitlines() == ["no suite 'missing' at benchmark_output/runs/missing"]


def test_every_readme_command_is_of_a_known_kind_and_installs_a_real_extra() -> None:
    known = extras()
    for page, index in OTHER_BLOCKS:
        for line in PAGE_BLOCKS[page][index].commands:
            for step in steps_of(line):
                if step.kind == "install":
                    (named,) = re.findall(r"\[([\w,]+)\]", step.command)
                    assert set(named.split(",")) <= known, step.command


def test_a_third_party_tool_lives_in_a_venv_of_its_own() -> None:
    """The README's llama-cpp-python lines never install into the run or test venvs, nor ours into its venv."""
    run_venv = steps_of(BLOCKS[0].commands[0])[0].command.split()[-1]
    tools = [
        s for p, i in OTHER_BLOCKS for line in PAGE_BLOCKS[p][i].commands for s in steps_of(line) if s.kind == "tool"
    ]
    assert tools, "the README's llama-cpp-python block is gone: drop this rule with it"
    for step in tools:
        venv = re.search(r"(?<![\w./~-])([\w.~-][\w./~-]*)/bin/", step.command)
        assert venv and venv[1] not in {run_venv, *TEST_VENVS}, f"a tool outside a venv of its own: {step.command}"
        assert "helm" not in step.command.split("/bin/")[-1].split()[:3], step.command


RUN_BLOCKS = [
    (page, i)
    for page, i in OTHER_BLOCKS
    if any(
        step.kind not in ("venv", "tool", "door") for line in PAGE_BLOCKS[page][i].commands for step in steps_of(line)
    )
]
"""The blocks with a command of ours to run (a third-party server's block is checked above, not run)."""


def run_bash(command: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"README command failed ({proc.returncode}): {command}\n{output[-4000:]}"
    return output


def serve_until_answered(command: str, cwd: Path, env: dict[str, str]) -> None:
    port = free_port()
    server = subprocess.Popen(
        ["bash", "-c", f"exec {command} --port {port}"],
        cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/", server)
    finally:
        server.terminate()
        server.wait(timeout=60)


def helm_run_as_written(command: str) -> str:
    """``--dry-run`` added; a ``--runner-class-name`` (the Slurm manager) must import, and is left out."""
    runner = re.search(r"--runner-class-name (\S+)\s*", command)
    if runner:
        from helm.common.object_spec import get_class_by_name

        assert get_class_by_name(runner[1])
        command = command.replace(runner[0], "")
    return f"{command} --dry-run"


def prices_example() -> str:
    """The judge prices file the pages show (docs/report.md), which a block's ``--judge-prices prices.yaml`` reads."""
    texts = [page.read_text(encoding="utf-8") for page in PAGES]
    (prices,) = [b for text in texts for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "batch_" in b]
    return prices


def test_the_prices_file_the_docs_name_ships_as_shown() -> None:
    """``--judge-prices prices.yaml`` names a file the docs show as a block and a clone holds as docs/prices.yaml."""
    assert (REPO / "docs" / "prices.yaml").read_text(encoding="utf-8") == prices_example()


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("page", "index"), RUN_BLOCKS, ids=[f"{p}-line-{PAGE_BLOCKS[p][i].start_line}" for p, i in RUN_BLOCKS]
)
def test_the_block_runs_as_written(page: str, index: int, synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    shutil.copytree(REPO / "run_specs", tmp_path / "run_specs")
    (tmp_path / "prices.yaml").write_text(prices_example())
    env = user_env(**synthetic_notes.env(), PATH=f"{BIN}:{user_env().get('PATH', '')}")
    blocks = PAGE_BLOCKS[page]
    for earlier in [blocks[i] for p, i in OTHER_BLOCKS if p == page and i < index]:  # exported before this block
        for line in earlier.commands:
            for step in steps_of(line):
                if step.kind == "export":
                    name, value = step.command.removeprefix("export ").split("=", 1)
                    (env[name],) = shlex.split(value)
    for line in blocks[index].commands:
        for step in steps_of(line):
            if step.kind == "export":
                name, value = step.command.removeprefix("export ").split("=", 1)
                (env[name],) = shlex.split(value)
            elif step.kind == "helm-run":
                run_bash(helm_run_as_written(step.command), tmp_path, env)
            elif step.kind == "run" and "--door-results" in step.command:  # other doors' runs to read: made here
                write_verifiers_run(tmp_path, "junk", [{"harsh"}] * 9 + [set()])
                write_inspect_log(tmp_path, "openai-api/local/decent", [set()] * 10)
                assert "WARNING: model junk's answers make judge harsh fail" in run_bash(step.command, tmp_path, env)
            elif step.kind == "run":
                run_bash(step.command, tmp_path, env)
            elif step.kind == "server":
                serve_until_answered(step.command, tmp_path, env)
            elif step.kind == "synopsis":
                usage = run_bash(f"{step.command.split()[0]} --help", tmp_path, env)
                for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", step.command):
                    assert option in usage, f"{option} of the README's synopsis is not an option: {step.command}"
