"""The control models: each answer is what its control promises, for every note of both modes.

The note tests go the way a run goes: the scenario's instances, HELM's own adapter (so the prompts are
the real ones, untruncated), HELM's AutoClient and the registered deployments. They run on the synthetic
notes; one test checks on the pinned notes that each real prompt still finds its own note.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.model_deployment_registry import (
    ALL_MODEL_DEPLOYMENTS,
    get_default_model_deployment_for_model,
    get_model_deployment,
)
from helm.benchmark.model_metadata_registry import get_model_metadata
from helm.benchmark.scenarios.scenario import Instance
from helm.benchmark.window_services.tokenizer_service import TokenizerService
from helm.benchmark.window_services.window_service_factory import WindowServiceFactory
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import BlackHoleCacheBackendConfig
from helm.common.local_context import LocalContext
from helm.common.request import Request
from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.common.choices import EXTRACTION_MODES
from helm_mtsamples_ext.controls_client import (
    ControlIndex,
    control_index,
    notes_dir,
    register_control_models,
)
from helm_mtsamples_ext.data import notes as notes_module
from helm_mtsamples_ext.data.controls import (
    CONTROL_KINDS,
    PADDING_SENTENCES,
    ControlNote,
    control_answers,
    control_model_name,
    derangement,
    pad,
    truncate,
)
from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec
from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario, build_instances
from tests.synthetic_notes import HELM_INSTANCES, SECTIONS_INSTANCES, SyntheticNotes, notes_in

pytestmark = pytest.mark.helm

register_control_models()

KINDS = st.sampled_from(["PLAN", "SUMMARY", "FINDINGS", "OTHER"])
NOTE_SETS = st.dictionaries(st.text("abcdef0123", min_size=1, max_size=6), KINDS, min_size=2, max_size=40)


def notes_of(kinds: dict[str, str]) -> list[ControlNote]:
    return [ControlNote(ident, kind, f"reference of {ident}") for ident, kind in kinds.items()]


# --- the derangement (shuffled) -------------------------------------------------------------------


@given(NOTE_SETS)
def test_shuffled_is_a_permutation_that_never_gives_a_note_its_own_reference(kinds: dict[str, str]) -> None:
    mapping = derangement(notes_of(kinds))
    assert sorted(mapping) == sorted(kinds) and sorted(mapping.values()) == sorted(kinds)
    assert all(note != donor for note, donor in mapping.items())


@given(NOTE_SETS)
def test_shuffled_keeps_the_section_kind_whenever_the_kind_has_another_note(kinds: dict[str, str]) -> None:
    """Except for the one note that must take the reference of a note alone in its kind, when there is
    exactly one such note (every reference is used once, so someone takes it)."""
    mapping = derangement(notes_of(kinds))
    counts = Counter(kinds.values())
    lone = [note for note, kind in kinds.items() if counts[kind] == 1]
    for note, donor in mapping.items():
        if counts[kinds[note]] >= 2 and lone != [donor]:
            assert kinds[donor] == kinds[note]


@given(NOTE_SETS, st.randoms(use_true_random=False))
def test_shuffled_does_not_depend_on_the_order_notes_come_in(kinds: dict[str, str], rnd: Any) -> None:
    notes = notes_of(kinds)
    shuffled = list(notes)
    rnd.shuffle(shuffled)
    assert derangement(shuffled) == derangement(notes)


@pytest.mark.parametrize(
    "kinds, expected",
    [
        # each kind rotates by one in id order
        ({"a": "PLAN", "b": "PLAN", "c": "PLAN"}, {"a": "b", "b": "c", "c": "a"}),
        ({"a": "PLAN", "b": "FINDINGS", "c": "PLAN", "d": "FINDINGS"}, {"a": "c", "c": "a", "b": "d", "d": "b"}),
        # lone notes of their kind are pooled and rotated among themselves
        ({"a": "PLAN", "b": "SUMMARY", "c": "FINDINGS"}, {"a": "b", "b": "c", "c": "a"}),
        # a pool of one joins the kind of the note after it in id order, in its id-order place
        ({"a": "PLAN", "b": "SUMMARY", "c": "PLAN"}, {"a": "b", "b": "c", "c": "a"}),
        ({"a": "PLAN", "b": "PLAN", "c": "SUMMARY"}, {"a": "b", "b": "c", "c": "a"}),
        ({"a": "PLAN", "b": "PLAN", "c": "FINDINGS", "d": "FINDINGS", "e": "SUMMARY"},
         {"a": "b", "b": "e", "e": "a", "c": "d", "d": "c"}),
    ],
)  # fmt: skip
def test_shuffled_follows_the_documented_rule(kinds: dict[str, str], expected: dict[str, str]) -> None:
    assert derangement(notes_of(kinds)) == expected


@pytest.mark.parametrize("kinds", [{}, {"a": "PLAN"}])
def test_shuffled_refuses_fewer_than_two_notes(kinds: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="at least two"):
        derangement(notes_of(kinds))


# --- truncated and padded ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reference, expected",
    [
        ("The patient tolerated the procedure well and left for recovery.", "The patient tolerated"),  # ends at a space
        ("one two three four five six", "one two"),  # the third ends inside "three": back to the space
        ("Stenosis.", "Ste"),  # no word boundary within the third: cut mid-word
        ("x", "x"),
        ("Uncomplicated recovery", "Uncompl"),
    ],
)
def test_truncated_is_the_first_third_cut_at_a_word_boundary(reference: str, expected: str) -> None:
    assert truncate(reference) == expected


@given(st.text(st.sampled_from("ab .\n"), min_size=1, max_size=200).filter(lambda t: t.strip() == t and t))
def test_truncated_is_a_short_nonempty_prefix(reference: str) -> None:
    cut = truncate(reference)
    assert cut and reference.startswith(cut)
    assert len(cut) <= max(1, len(reference) // 3)


@given(st.text(min_size=0, max_size=500))
def test_padded_starts_with_the_reference_and_adds_only_boilerplate(reference: str) -> None:
    padded = pad(reference)
    assert padded.startswith(reference) and len(padded) >= 3 * len(reference)
    rest = padded[len(reference) :].strip()
    for sentence in PADDING_SENTENCES:
        rest = rest.replace(sentence, "")
    assert rest.strip() == ""


# --- every note, both modes, through HELM's adapter and AutoClient ----------------------------------


@pytest.fixture(scope="module")
def notes_env(synthetic_notes: SyntheticNotes, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The user's way to the notes: a mirror directory, its manifest, and a cache the package fills and verifies."""
    return {**synthetic_notes.env(), "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp_path_factory.mktemp("controls_cache"))}


@pytest.fixture(scope="module")
def auto_client(tmp_path_factory: pytest.TempPathFactory) -> AutoClient:
    cache = tmp_path_factory.mktemp("controls_client")
    return AutoClient(credentials={}, file_storage_path=str(cache), cache_backend_config=BlackHoleCacheBackendConfig())


def instances_of(notes_dir: Path, mode: str) -> list[Instance]:
    return build_instances(notes_in(notes_dir), mode).instances


def adapt(notes_dir: Path, mode: str, prod_env: Path) -> list[RequestState]:
    """The request states HELM's adapter makes for every instance of ``mode``, for a control model."""
    service = TokenizerService(LocalContext(str(prod_env)))
    model = control_model_name("reference")
    spec = replace(get_mtsamples_procedures_spec(extraction=mode).adapter_spec, model=model, model_deployment=model)
    return AdapterFactory.get_adapter(spec, service).adapt(instances_of(notes_dir, mode), 1)


@pytest.fixture(scope="module")
def adapted(synthetic_notes_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[RequestState]]:
    prod_env = tmp_path_factory.mktemp("prod_env")
    return {mode: adapt(synthetic_notes_dir, mode, prod_env) for mode in EXTRACTION_MODES}


def use_notes(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """No scenario has loaded in this process (as far as the client knows): it goes by the environment."""
    monkeypatch.setattr(notes_module, "_verified_dir", None)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def answers_through_helm(
    kind: str, states: list[RequestState], client: AutoClient, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> dict[str, str]:
    """{instance id: the control's answer}, asked through AutoClient as HELM's executor asks."""
    use_notes(monkeypatch, env)
    model = control_model_name(kind)
    answers = {}
    for state in states:
        result = client.make_request(replace(state.request, model=model, model_deployment=model))
        assert result.success, result.error
        (completion,) = result.completions
        answers[str(state.instance.id)] = completion.text
    return answers


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
def test_prompts_reach_the_controls_untruncated(mode: str, adapted: dict[str, list[RequestState]]) -> None:
    """The controls' context window is large enough that HELM's adapter leaves every prompt whole."""
    states = adapted[mode]
    assert len(states) == {"helm": HELM_INSTANCES, "sections": SECTIONS_INSTANCES}[mode]
    assert all(not s.prompt_truncated and s.instance.input.text in s.request.prompt for s in states)


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
def test_every_pinned_notes_prompt_finds_its_own_note(mode: str, pinned_notes_dir: Path, tmp_path: Path) -> None:
    """On the real notes (with their shared openings and look-alike inputs), every prompt is answered with its own
    note's reference."""
    states = adapt(pinned_notes_dir, mode, tmp_path)
    index = ControlIndex.from_notes(notes_in(pinned_notes_dir))
    assert len(states) == {"helm": 131, "sections": 74}[mode]
    assert all(index.answer("reference", s.request.prompt) == reference_of(s) for s in states)


def reference_of(state: RequestState) -> str:
    return state.instance.references[0].output.text


def is_its_own_reference(reference: str, answer: str) -> None:
    assert answer == reference


def is_a_prefix_of_at_most_a_third(reference: str, answer: str) -> None:
    assert answer and reference.startswith(answer) and len(answer) <= max(1, len(reference) // 3)


def is_the_reference_at_least_two_and_a_half_times_as_long(reference: str, answer: str) -> None:
    assert answer.startswith(reference) and len(answer) >= 2.5 * len(reference)


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
@pytest.mark.parametrize(
    "kind, promise",
    [
        ("reference", is_its_own_reference),
        ("truncated", is_a_prefix_of_at_most_a_third),
        ("padded", is_the_reference_at_least_two_and_a_half_times_as_long),
    ],
)
def test_control_answers_each_note_as_it_promises(
    kind: str, promise: Callable[[str, str], None], mode: str, adapted: dict[str, list[RequestState]],
    auto_client: AutoClient, notes_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """What each of these controls answers a note depends on that note's reference alone (the shuffled control's
    answer depends on the other notes too: its own test below)."""
    answers = answers_through_helm(kind, adapted[mode], auto_client, monkeypatch, notes_env)
    for state in adapted[mode]:
        promise(reference_of(state), answers[str(state.instance.id)])


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
def test_shuffled_control_answers_another_notes_reference_of_the_same_kind(
    mode: str, adapted: dict[str, list[RequestState]], auto_client: AutoClient, notes_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    states = adapted[mode]
    answers = answers_through_helm("shuffled", states, auto_client, monkeypatch, notes_env)
    section = {reference_of(s): s.instance.extra_data["extracted_section"] for s in states}  # type: ignore[index]
    for state in states:
        answer = answers[str(state.instance.id)]
        assert answer != reference_of(state), f"{state.instance.id} got its own reference"
        assert answer in section, "not a reference of this mode's notes"
        assert section[answer] == state.instance.extra_data["extracted_section"]  # type: ignore[index]
    assert sorted(answers.values()) == sorted(reference_of(s) for s in states), "each reference used once"


def test_unknown_prompt_fails_at_once_with_a_reason(
    auto_client: AutoClient, notes_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a made-up answer; not retried (HELM would back off for a minute); fatal for the run."""
    use_notes(monkeypatch, notes_env)
    model = control_model_name("reference")
    result = auto_client.make_request(Request(model=model, model_deployment=model, prompt="What is 2 + 2?"))
    assert not result.success and not result.completions
    assert result.error is not None and "no MTSamples Procedures note" in result.error
    assert result.error_flags is not None
    assert result.error_flags.is_retriable is False and result.error_flags.is_fatal is True


def test_prompt_holding_two_notes_fails_rather_than_picking_one(synthetic_notes_dir: Path) -> None:
    index = ControlIndex.from_notes(notes_in(synthetic_notes_dir))
    first, second = instances_of(synthetic_notes_dir, "helm")[:2]
    with pytest.raises(ValueError, match="several notes"):
        index.answer("reference", f"Patient Notes: {first.input.text}\nPatient Notes: {second.input.text}\n")


def test_the_index_is_built_once_and_read_from_the_cache_dir(
    notes_env: dict[str, str], synthetic_notes: SyntheticNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_notes(monkeypatch, notes_env)
    assert control_index() is control_index()
    assert notes_dir() == Path(notes_env["MTSAMPLES_PROCEDURES_CACHE_DIR"])
    assert sorted(p.name for p in notes_dir().glob("*.txt")) == synthetic_notes.names


def test_the_client_reads_the_notes_where_this_processs_scenario_loaded_them(
    synthetic_notes: SyntheticNotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HELM tells a client nothing of the run's output path; the scenario, which runs first, does."""
    use_notes(monkeypatch, synthetic_notes.env())
    monkeypatch.delenv("MTSAMPLES_PROCEDURES_CACHE_DIR", raising=False)
    MTSamplesProceduresScenario().get_instances(str(tmp_path / "out"))
    assert notes_dir() == tmp_path / "out"


# --- determinism and registration ------------------------------------------------------------------

_DIGEST = """
import hashlib, json, pathlib, sys
from helm_mtsamples_ext.controls_client import ControlIndex
d = pathlib.Path(sys.argv[1])
index = ControlIndex.from_notes({p.name: p.read_bytes() for p in sorted(d.iterdir(), reverse=True)})
print(hashlib.sha256(json.dumps(sorted((n.extraction, n.id, n.answers) for n in index.notes)).encode()).hexdigest())
"""


def test_answers_are_the_same_in_another_process_with_another_hash_seed(synthetic_notes_dir: Path) -> None:
    """Nothing depends on string hashing or on the order files are listed in."""
    index = ControlIndex.from_notes(notes_in(synthetic_notes_dir))
    here = hashlib.sha256(json.dumps(sorted((n.extraction, n.id, n.answers) for n in index.notes)).encode()).hexdigest()
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    there = subprocess.run(
        [sys.executable, "-c", _DIGEST, str(synthetic_notes_dir)], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert there == here


@pytest.mark.parametrize("kind", CONTROL_KINDS)
def test_controls_are_registered_as_keyless_controls_not_models(kind: str) -> None:
    name = control_model_name(kind)
    metadata = get_model_metadata(name)
    assert metadata.creator_organization_name == "mtsamples-control"
    assert metadata.display_name.startswith("Control: ") and "not a model" in metadata.description
    assert metadata.access == "open" and get_default_model_deployment_for_model(name) == name
    assert get_model_deployment(name).client_spec.args == {"kind": kind}


def test_registering_again_changes_nothing() -> None:
    before = len(ALL_MODEL_DEPLOYMENTS)
    register_control_models()
    assert len(ALL_MODEL_DEPLOYMENTS) == before


def test_the_window_is_larger_than_any_note(tmp_path: Path) -> None:
    service = TokenizerService(LocalContext(str(tmp_path)))
    window = WindowServiceFactory.get_window_service(control_model_name("padded"), service)
    assert window.max_request_length >= 2**31 - 1


def test_control_answers_refuses_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown control"):
        control_answers("oracle", notes_of({"a": "PLAN", "b": "PLAN"}))
