"""The control models as HELM sees them: registered deployments, and a Client that answers from the notes.

``helm-run --run-entries mtsamples_procedures:model=mtsamples-control/reference`` runs a control like
any model: the plugin registers, for each kind in ``controls.CONTROL_KINDS``, a model (metadata that
says it is a judge-audit control, not a model), a deployment served by ``ControlClient``, and one
character-level tokenizer with a context window no note reaches, so HELM's adapter never truncates
a prompt (a control must see the whole input to know which note it is answering).

HELM gives a client only the ``Request``. The client finds the note from the prompt: it loads the
pinned notes the way the scenario does (``ensure_notes``, verified by checksum, so the notes are the
same bytes wherever they are cached), builds the instances of *both* extraction modes, and picks the
instance whose input appears verbatim in the prompt (the longest, since a ``helm`` input is often a
prefix of the same note's ``sections`` input). A prompt matching no note, or two notes that would
answer differently, fails the request with the reason: a control never makes up an answer.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from helm.benchmark.model_deployment_registry import (
    DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT,
    ClientSpec,
    ModelDeployment,
    register_model_deployment,
)
from helm.benchmark.model_metadata_registry import (
    FULL_FUNCTIONALITY_TEXT_MODEL_TAG,
    MODEL_NAME_TO_MODEL_METADATA,
    TEXT_MODEL_TAG,
    ModelMetadata,
    register_model_metadata,
)
from helm.benchmark.tokenizer_config_registry import (
    TOKENIZER_NAME_TO_CONFIG,
    TokenizerConfig,
    TokenizerSpec,
    register_tokenizer_config,
)
from helm.clients.client import Client
from helm.common.hierarchical_logger import hlog
from helm.common.request import ErrorFlags, GeneratedOutput, Request, RequestResult, Token

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.choices import EXTRACTION_MODES
from helm_mtsamples_ext.common.helm_paths import OUTPUT_PATH
from helm_mtsamples_ext.data.controls import (
    CONTROL_KINDS,
    CONTROL_ORGANIZATION,
    ControlNote,
    control_answers,
    control_model_name,
)
from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.notes import (
    DataError,
    ensure_notes,
    resolve_base_url,
    resolve_cache_dir,
    verified_notes_dir,
)
from helm_mtsamples_ext.scenario import build_instances

TOKENIZER_NAME = f"{CONTROL_ORGANIZATION}/characters"
CONTEXT_WINDOW = 2**31 - 1
"""In characters; notes over 1 MB are skipped by the scenario, so no prompt comes near it."""
HELM_DEFAULT_NOTES_DIR = Path(OUTPUT_PATH) / "scenarios" / names.RUN_ENTRY
"""Where ``helm-run`` without ``-o`` caches the notes; used only when no scenario ran in this process."""

DISPLAY_NAMES = {
    "reference": "Control: reference (ceiling)",
    "shuffled": "Control: shuffled (floor)",
    "truncated": "Control: truncated (first third)",
    "padded": "Control: padded (3x boilerplate)",
}
_WHAT = {
    "reference": "answers with the clinician's own section: the ceiling a judge should give",
    "shuffled": "answers with another note's section (a fixed derangement, same section kind where possible): "
    "fluent, clinical and wrong for this patient, the floor",
    "truncated": "answers with the first third of the clinician's section, cut at a word boundary: "
    "completeness must drop",
    "padded": "answers with the clinician's section followed by generic, clinically empty sentences, "
    "three times as long: a fair judge does not reward it (verbosity bias)",
}


def description(kind: str) -> str:
    return f"Judge-audit control, not a model: {_WHAT[kind]}. Built from the note itself by helm-mtsamples-ext."


class UnknownPrompt(ValueError):
    """The prompt is not the adapted input of exactly one MTSamples Procedures note."""


@dataclass(frozen=True)
class IndexedNote:
    input: str
    extraction: str
    id: str
    answers: dict[str, str] = field(hash=False)
    """{control kind: answer}"""


class ControlIndex:
    """Every instance of both extraction modes, with each control's answer, found by its input text."""

    def __init__(self, notes: list[IndexedNote]) -> None:
        # Longest input first, so an input is only ever contained in one listed before it.
        self.notes = sorted(notes, key=lambda n: (-len(n.input), n.extraction, n.id))

    @classmethod
    def from_notes(cls, notes: dict[str, bytes]) -> ControlIndex:
        indexed: list[IndexedNote] = []
        for mode in EXTRACTION_MODES:
            instances = build_instances(notes, mode).instances
            control_notes = [
                ControlNote(str(i.id), str((i.extra_data or {})["extracted_section"]), i.references[0].output.text)
                for i in instances
            ]
            answers = {kind: control_answers(kind, control_notes) for kind in CONTROL_KINDS}
            indexed += [
                IndexedNote(i.input.text, mode, str(i.id), {kind: answers[kind][str(i.id)] for kind in CONTROL_KINDS})
                for i in instances
            ]
        return cls(indexed)

    def find(self, prompt: str) -> list[IndexedNote]:
        """The notes whose input is found verbatim in ``prompt``, leaving out any input found only as part
        of a longer found one (a ``helm`` input inside the same note's ``sections`` input). Normally one."""
        found = [n for n in self.notes if n.input and n.input in prompt]
        return [n for i, n in enumerate(found) if not any(n.input in o.input for o in found[:i] if o.input != n.input)]

    def answer(self, kind: str, prompt: str) -> str:
        matches = self.find(prompt)
        if not matches:
            raise UnknownPrompt(
                f"{control_model_name(kind)}: the prompt holds the input of no MTSamples Procedures note "
                "(a control answers only this benchmark's prompts, untruncated)"
            )
        answers = {m.answers[kind] for m in matches}
        if len(answers) > 1:
            which = ", ".join(f"{m.id} ({m.extraction})" for m in matches)
            raise UnknownPrompt(
                f"{control_model_name(kind)}: the prompt holds the inputs of several notes that answer differently: "
                f"{which}"
            )
        return answers.pop()


_index_lock = threading.Lock()
_indexes: dict[Path, ControlIndex] = {}


def notes_dir() -> Path:
    """Where this process's scenario read the notes; else ``MTSAMPLES_PROCEDURES_CACHE_DIR``, else HELM's default."""
    return verified_notes_dir() or resolve_cache_dir(HELM_DEFAULT_NOTES_DIR)


def control_index(directory: Path | None = None) -> ControlIndex:
    """The index over the notes in ``directory`` (default ``notes_dir()``), built once per directory.

    ``ensure_notes`` verifies every cached note (a warm cache makes no request) and fetches any that is
    missing from ``MTSAMPLES_PROCEDURES_BASE_URL`` or the pinned URL, as the scenario does, against the
    same manifest (``MTSAMPLES_PROCEDURES_MANIFEST``, else the pinned one).
    """
    where = (directory or notes_dir()).expanduser().resolve()
    with _index_lock:  # HELM calls clients from many threads; the first request builds, the others wait
        index = _indexes.get(where)
        if index is None:
            paths = ensure_notes(where, base_url=resolve_base_url(), manifest=resolve_manifest(), progress=False)
            index = ControlIndex.from_notes({name: path.read_bytes() for name, path in paths.items()})
            hlog(f"helm-mtsamples-ext controls: {len(index.notes)} instances (both extraction modes) from {where}")
            _indexes[where] = index
    return index


def _prompt_text(request: Request) -> str:
    if request.prompt or not request.messages:
        return request.prompt
    return "\n".join(str(m.get("content", "")) for m in request.messages)


class ControlClient(Client):
    """Answers every MTSamples Procedures prompt with the ``kind`` control's answer for its note."""

    def __init__(self, kind: str) -> None:
        control_model_name(kind)  # validates
        self.kind = kind

    def make_request(self, request: Request) -> RequestResult:
        start = time.perf_counter()
        try:
            answer = control_index().answer(self.kind, _prompt_text(request))
        except (UnknownPrompt, DataError) as e:
            # Not retriable (the same prompt fails again), and fatal: a control with a made-up or empty
            # answer would put a false ceiling or floor in the audit.
            return RequestResult(
                success=False,
                cached=False,
                error=str(e),
                completions=[],
                embedding=[],
                error_flags=ErrorFlags(is_retriable=False, is_fatal=True),
            )
        completion = GeneratedOutput(text=answer, logprob=0.0, tokens=[Token(text=answer, logprob=0.0)])
        return RequestResult(
            success=True,
            cached=False,
            request_time=time.perf_counter() - start,
            completions=[completion] * request.num_completions,
            embedding=[],
        )


_registry_lock = threading.Lock()


def control_deployment(kind: str) -> ModelDeployment:
    name = control_model_name(kind)
    return ModelDeployment(
        name=name,
        model_name=name,
        client_spec=ClientSpec(class_name=names.CONTROL_CLIENT_CLASS, args={"kind": kind}),
        tokenizer_name=TOKENIZER_NAME,
        max_sequence_length=CONTEXT_WINDOW,
    )


def control_metadata(kind: str) -> ModelMetadata:
    return ModelMetadata(
        name=control_model_name(kind),
        creator_organization_name=CONTROL_ORGANIZATION,
        display_name=DISPLAY_NAMES[kind],
        description=description(kind),
        access="open",  # no key: it runs offline from the pinned notes
        release_date=None,
        tags=[TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG],
    )


def register_control_models() -> None:
    """Register the tokenizer, and each control's metadata and deployment, with HELM (idempotent)."""
    tokenizer = TokenizerConfig(
        name=TOKENIZER_NAME,
        tokenizer_spec=TokenizerSpec(class_name="helm.tokenizers.simple_tokenizer.SimpleTokenizer"),
        end_of_text_token="</s>",
        prefix_token="<s>",
    )
    with _registry_lock:
        if TOKENIZER_NAME_TO_CONFIG.get(TOKENIZER_NAME) != tokenizer:
            register_tokenizer_config(tokenizer)
        for kind in CONTROL_KINDS:
            if control_model_name(kind) not in MODEL_NAME_TO_MODEL_METADATA:
                register_model_metadata(control_metadata(kind))
            deployment = control_deployment(kind)
            if DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT.get(deployment.name) != deployment:
                register_model_deployment(deployment)
