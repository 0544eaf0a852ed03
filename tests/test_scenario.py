"""The scenario: every note becomes an Instance or a logged, counted reason; nothing vanishes silently."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest

from helm_mtsamples_ext.data.instances import instance_id
from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario, build_instances

pytestmark = pytest.mark.helm

GOOD = b"Medical Specialty:Urology\nSample Name: Cystoscopy\nINDICATIONS: Hematuria.\nPLAN: Follow up in two weeks.\n"


def _logged(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= level]


def test_good_note_becomes_an_instance_with_extra_data() -> None:
    """Input, reference, section, file name and specialty travel with the Instance."""
    (inst,) = build_instances({"Cystoscopy.txt": GOOD}).instances
    assert inst.references[0].output.text == "Follow up in two weeks."
    assert "PLAN:" not in inst.input.text and "Hematuria" in inst.input.text
    assert inst.extra_data == {
        "filename": "Cystoscopy.txt",
        "extracted_section": "PLAN",
        "specialty": "Urology",
        "extraction": "helm",
    }
    assert inst.split == "test" and inst.references[0].is_correct


@pytest.mark.parametrize(
    "name, raw, reason",
    [
        ("empty.txt", b"", "empty file"),
        ("blank.txt", b"  \n\t\n", "empty file"),
        ("binary.txt", b"PLAN: x\x00\x01\x02", "binary file"),
        ("latin1.txt", "PLAN: caf\u00e9 au lait".encode("latin-1"), "not UTF-8 text"),
        ("huge.txt", b"PLAN: go home.\n" + b"x" * (5 * 1024 * 1024), "larger than"),
        ("noheader.txt", b"INDICATIONS: none of the three headers here.", "no PLAN/SUMMARY/FINDINGS"),
        ("emptyplan.txt", b"INDICATIONS: x.\nPLAN:\n", "empty"),
    ],
)
def test_bad_note_is_skipped_with_a_logged_reason(
    name: str, raw: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Bad input never crashes the run: the note is skipped, named in a warning, counted by reason.

    A note without any target header is the data set's normal case (298 of 429), so it is named
    at debug level only; everything else is a warning."""
    with caplog.at_level(logging.DEBUG, logger="helm"):
        batch = build_instances({name: raw, "good.txt": GOOD})
    assert [i.extra_data["filename"] for i in batch.instances] == ["good.txt"]  # type: ignore[index]
    (counted,) = batch.skipped
    assert reason.lower() in counted.lower()
    level = logging.DEBUG if name == "noheader.txt" else logging.WARNING
    assert any(name in w and reason.lower() in w.lower() for w in _logged(caplog, level))


@pytest.mark.parametrize(
    "name", ["Report #2.txt", "A & B.txt", "Knee scope - 1.txt", "Ostéotomie.txt", "Ω.txt", ".txt"]
)
def test_odd_file_names_give_stable_safe_ids(name: str) -> None:
    """Ids come from the file name: the same every run, URL- and file-system-safe, distinct per name."""
    ident = instance_id(name)
    assert ident == instance_id(name)
    assert re.fullmatch(r"[a-z0-9_]+", ident)
    (inst,) = build_instances({name: GOOD}).instances
    assert inst.id == ident and inst.extra_data["filename"] == name  # type: ignore[index]


def test_similar_names_never_share_an_id() -> None:
    """Slugs can collide (`#2` vs `2`); the hash suffix keeps ids unique."""
    names = ["Report #2.txt", "Report 2.txt", "report-2.txt", "REPORT_2.txt"]
    assert len({instance_id(n) for n in names}) == len(names)


def test_skips_are_counted_by_reason() -> None:
    """The load's summary line reports totals by reason, so the counts must add up per reason."""
    batch = build_instances({"a.txt": b"", "b.txt": b"", "c.txt": GOOD})
    assert batch.skipped == {"empty file": 2}


def test_windows_newlines_read_as_helm_reads_them() -> None:
    """HELM reads notes in text mode, so CRLF becomes LF; the reference must not keep a stray CR."""
    (inst,) = build_instances({"crlf.txt": GOOD.replace(b"\n", b"\r\n")}).instances
    assert inst.references[0].output.text == "Follow up in two weeks."
    assert "\r" not in inst.input.text


def test_unknown_extraction_mode_is_refused() -> None:
    """A typo in `extraction=` fails at once instead of silently using another rule."""
    with pytest.raises(ValueError, match="extraction"):
        MTSamplesProceduresScenario(extraction="clever")


def test_pinned_notes_from_a_plain_directory_give_131(
    pinned_notes_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Air-gapped use: a directory as base URL, read at load time; HELM's rule yields 131 instances."""
    mirror = tmp_path / "mirror"
    shutil.copytree(pinned_notes_dir, mirror)
    monkeypatch.setenv("MTSAMPLES_PROCEDURES_BASE_URL", str(mirror))
    monkeypatch.setenv("MTSAMPLES_PROCEDURES_CACHE_DIR", str(tmp_path / "cache"))
    with caplog.at_level(logging.INFO, logger="helm"):
        instances = MTSamplesProceduresScenario().get_instances(str(tmp_path / "unused"))
    assert len(instances) == 131
    assert len({i.id for i in instances}) == 131
    assert len(list((tmp_path / "cache").glob("*.txt"))) == 429
    summary = [m for m in (r.getMessage() for r in caplog.records) if "skipped by reason" in m]
    assert len(summary) == 1 and "131 instances from 429 notes" in summary[0]
