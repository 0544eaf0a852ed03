"""HELM Scenario for MTSamples Procedures, on pinned and checksummed data.

Replaces HELM 0.5.16's `MTSamplesProceduresScenario`, which lists files through the GitHub API
(no offline use, rate limits), forgets to URL-quote file names (three instances lost to `#`),
and drops any note whose header appears only in lower case. See `data/sections.py` for the rules. A thin
adapter: the samples are made in `data/instances.py`, the notes fetched and verified in `data/notes.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from helm.benchmark.presentation.taxonomy_info import TaxonomyInfo
from helm.benchmark.scenarios.scenario import (
    CORRECT_TAG,
    TEST_SPLIT,
    Input,
    Instance,
    Output,
    Reference,
    Scenario,
    ScenarioMetadata,
)
from helm.common.general import ensure_directory_exists
from helm.common.hierarchical_logger import hdebug, hlog, hwarn

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.choices import EXTRACTION_MODES
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.data.custom_manifest import ManifestUnusable, resolve_manifest
from helm_mtsamples_ext.data.instances import NO_HEADER, NoteSample, build_samples
from helm_mtsamples_ext.data.notes import (
    NoteHostUnreachable,
    ensure_notes,
    remember_verified_dir,
    resolve_base_url,
    resolve_cache_dir,
)


@dataclass
class NoteBatch:
    """The instances built from a set of notes, and why the others were left out."""

    instances: list[Instance] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def to_instance(sample: NoteSample) -> Instance:
    """HELM's Instance of one note sample (data/instances.py makes the samples)."""
    return Instance(
        id=sample.id,
        input=Input(text=sample.input),
        references=[Reference(Output(text=sample.reference), tags=[CORRECT_TAG])],
        split=TEST_SPLIT,
        extra_data=sample.extra_data,
    )


def build_instances(notes: Mapping[str, bytes], extraction: str = RunEntryArgs.extraction) -> NoteBatch:
    """Turn raw notes into Instances; every note left out is logged with its file name and counted."""
    built = build_samples(notes, extraction)
    for filename, reason in built.left_out:
        # Most pinned notes simply have no target header: that is the data set, not bad input, so
        # those are named at debug level (and counted); anything else is a warning.
        log = hdebug if reason == NO_HEADER else hwarn
        log(f"MTSamples Procedures: skipping {filename!r}: {reason}")
    return NoteBatch([to_instance(sample) for sample in built.samples], built.skipped)


class MTSamplesProceduresScenario(Scenario):
    """MTSamples Procedures: write the treatment plan for an operative note.

    Data: 429 transcribed operative notes from MTSamples, pinned to commit
    c4c252443fa9c52afb6960f53e51be278639bea2 of github.com/raulista1997/benchmarkdata (the commit HELM
    pins), checked against sizes and SHA-256s shipped in this package. The reference is the note's
    PLAN, else SUMMARY, else FINDINGS section; the input is the note without it.

    Example (abridged):
        input:     "Medical Specialty:Gastroenterology ... INDICATIONS: Patient is a pleasant 37-year-old ..."
        reference: "The patient was found upon excision of the abscess to have a retained foreign body ..."

    `extraction="helm"` reproduces HELM's instance set exactly (for comparison with MedHELM);
    `extraction="sections"` cuts sections at the next ALL-CAPS header, for clean references.
    """

    name = names.RUN_ENTRY
    description = (
        "MTSamples Procedures: transcribed operative notes; the model writes the treatment plan "
        "(PLAN, else SUMMARY, else FINDINGS section) from the rest of the note."
    )
    tags = ["medical", "transcription", "plan_generation"]

    def __init__(self, extraction: str = RunEntryArgs.extraction, base_url: str | None = None) -> None:
        super().__init__()
        if extraction not in EXTRACTION_MODES:
            raise ValueError(f"extraction must be one of {EXTRACTION_MODES}, got {extraction!r}")
        self.extraction = extraction
        self.base_url = base_url

    def get_instances(self, output_path: str) -> list[Instance]:
        # Environment variables are read here, when the scenario loads, never at import.
        cache_dir = resolve_cache_dir(output_path)
        ensure_directory_exists(str(cache_dir))
        try:
            paths = ensure_notes(cache_dir, base_url=resolve_base_url(self.base_url), manifest=resolve_manifest())
        except (NoteHostUnreachable, ManifestUnusable) as e:
            # One line, last: HELM's runner would print a traceback per run and a RunnerError traceback after,
            # and every other run of the command would fail the same way.
            raise SystemExit(f"mtsamples_procedures: {e}") from None
        remember_verified_dir(cache_dir)
        batch = build_instances({name: path.read_bytes() for name, path in paths.items()}, self.extraction)
        skipped = ", ".join(f"{reason}: {count}" for reason, count in sorted(batch.skipped.items())) or "none"
        hlog(
            f"MTSamples Procedures ({self.extraction} extraction): {len(batch.instances)} instances "
            f"from {len(paths)} notes; skipped by reason: {skipped}"
        )
        return batch.instances

    def get_metadata(self) -> ScenarioMetadata:
        return ScenarioMetadata(
            name=names.RUN_ENTRY,
            display_name="MTSamples Procedures",
            short_display_name="MTSamples Procedures",
            description=(
                "Transcribed operative notes from MTSamples with the PLAN / SUMMARY / FINDINGS section cut "
                "away; the model writes a treatment plan, scored by a panel of LLM judges on accuracy, "
                "completeness and clarity against the section cut from the note."
            ),
            taxonomy=TaxonomyInfo(
                task="Clinical text generation",
                what="Treatment plans for post-procedure operative notes",
                when="Post-procedure",
                who="Clinicians",
                language="English",
            ),
            main_metric="mtsamples_procedures_reward",
            main_split="test",
        )
