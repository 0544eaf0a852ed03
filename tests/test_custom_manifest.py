"""MTSAMPLES_PROCEDURES_MANIFEST: other notes than the pinned 429 load, still verified byte for byte, with a
warning that the results are not the pinned benchmark's; a manifest that cannot be used is one line."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV, ManifestUnusable, manifest_for, resolve_manifest
from helm_mtsamples_ext.data.notes import BASE_URL_ENV, CACHE_DIR_ENV, DataError, load_manifest, parse_manifest
from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario
from tests.synthetic_notes import HELM_INSTANCES, SECTIONS_INSTANCES, SyntheticNotes

pytestmark = pytest.mark.helm

NOT_COMPARABLE = "not comparable with the pinned MTSamples Procedures benchmark"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (BASE_URL_ENV, CACHE_DIR_ENV, MANIFEST_ENV):
        monkeypatch.delenv(name, raising=False)


def use(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_without_the_variable_the_pinned_manifest_is_used() -> None:
    assert resolve_manifest() == load_manifest() and len(load_manifest()) == 429


@pytest.mark.parametrize("extraction, instances", [("helm", HELM_INSTANCES), ("sections", SECTIONS_INSTANCES)])
def test_the_scenario_loads_the_listed_notes_from_a_mirror_and_warns_they_are_not_the_benchmark(
    extraction: str,
    instances: int,
    synthetic_notes: SyntheticNotes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with synthetic_notes.mirror() as mirror, caplog.at_level(logging.INFO, logger="helm"):
        use(monkeypatch, mirror.env)
        loaded = MTSamplesProceduresScenario(extraction=extraction).get_instances(str(tmp_path))
        assert sorted(mirror.requested_paths) == synthetic_notes.names
    assert len(loaded) == instances
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == synthetic_notes.names
    (warning,) = [w for w in warnings_in(caplog) if MANIFEST_ENV in w]
    assert f"the {len(synthetic_notes.names)} notes listed in {synthetic_notes.manifest}" in warning
    assert NOT_COMPARABLE in warning


def test_a_note_that_differs_from_the_custom_manifest_is_still_refused(
    synthetic_notes: SyntheticNotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variable replaces the list, not the check."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in synthetic_notes.names:
        (notes / name).write_bytes((synthetic_notes.directory / name).read_bytes())
    altered = synthetic_notes.names[0]
    (notes / altered).write_bytes((notes / altered).read_bytes().replace(b"the", b"teh", 1))
    use(monkeypatch, {BASE_URL_ENV: str(notes), MANIFEST_ENV: str(synthetic_notes.manifest)})
    with pytest.raises(DataError) as raised:
        MTSamplesProceduresScenario().get_instances(str(tmp_path / "cache"))
    assert set(raised.value.failures) == {altered} and "sha256" in raised.value.failures[altered]


def test_the_synthetic_notes_are_not_the_pinned_ones(
    synthetic_notes: SyntheticNotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the variable the same mirror serves none of the 429 pinned notes: nothing loads unverified."""
    use(monkeypatch, {BASE_URL_ENV: str(synthetic_notes.directory)})
    with pytest.raises(DataError) as raised:
        MTSamplesProceduresScenario().get_instances(str(tmp_path))
    assert len(raised.value.failures) == 429


@pytest.mark.parametrize(
    "content, reason",
    [
        (None, "cannot be read (No such file or directory)"),
        ("filename\tsize\thash\n", "manifest header must be"),
        ("name\tbytes\tsha256\nx.txt\tten\t" + "0" * 64 + "\n", "malformed manifest row"),
        ("name\tbytes\tsha256\n", "lists no notes"),
    ],
    ids=["missing", "wrong-header", "bad-row", "empty"],
)
def test_a_manifest_that_cannot_be_used_is_one_line_naming_the_variable(
    content: str | None, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "manifest.tsv"
    if content is not None:
        path.write_text(content)
    monkeypatch.setenv(MANIFEST_ENV, str(path))
    with pytest.raises(ManifestUnusable) as raised:
        resolve_manifest()
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{MANIFEST_ENV}={path}") and reason in message
    assert message.endswith("or unset it for the pinned notes")
    with pytest.raises(SystemExit) as stopped:  # the scenario ends the run with that line, no traceback
        MTSamplesProceduresScenario().get_instances(str(tmp_path / "out"))
    assert str(stopped.value) == f"mtsamples_procedures: {message}"


def test_the_command_writes_the_manifest_of_a_directory_that_reads_back(synthetic_notes: SyntheticNotes) -> None:
    """`python -m helm_mtsamples_ext.custom_manifest DIR`: what a private mirror's owner points the variable to."""
    made = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.custom_manifest", str(synthetic_notes.directory)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert made.stdout == manifest_for(synthetic_notes.directory) == synthetic_notes.manifest.read_text()
    assert [e.name for e in parse_manifest(made.stdout)] == synthetic_notes.names
