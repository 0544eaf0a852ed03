"""The end-to-end tests' speed-up of HELM's prompt truncation (tests/e2e/helm_site/sitecustomize.py) cuts every
prompt exactly where HELM's own loop cuts it, on this HELM, and is loaded by the HELM binaries the tests run."""

from __future__ import annotations

import subprocess

from helm.benchmark.window_services.default_window_service import DefaultWindowService
from helm.benchmark.window_services.local_window_service import LocalWindowService
from helm.common.tokenization_request import (
    DecodeRequest,
    DecodeRequestResult,
    TokenizationRequest,
    TokenizationRequestResult,
)
from helm.tokenizers.simple_tokenizer import SimpleTokenizer

from tests.e2e.helm_site.sitecustomize import MODULE, bisected
from tests.e2e.helm_tools import BIN, user_env
from tests.synthetic_notes import SyntheticNotes

WINDOW = 2048  # simple/model1's max_sequence_length (HELM's model_deployments.yaml)
COMPLETION = 512  # the run entry's max_tokens: what HELM's adapter keeps free


class SimpleService:
    """HELM's TokenizerService for ``simple/tokenizer1``, without a server or a cache."""

    tokenizer = SimpleTokenizer()

    def tokenize(self, request: TokenizationRequest) -> TokenizationRequestResult:
        return self.tokenizer.tokenize(request)

    def decode(self, request: DecodeRequest) -> DecodeRequestResult:
        return self.tokenizer.decode(request)


def window_service(tokenizer: str = "simple/tokenizer1") -> DefaultWindowService:
    return DefaultWindowService(SimpleService(), tokenizer, WINDOW)  # type: ignore[arg-type]


HELMS_OWN = getattr(LocalWindowService.truncate_from_right, "__wrapped__", LocalWindowService.truncate_from_right)


def texts(synthetic_notes: SyntheticNotes) -> list[str]:
    """Every synthetic note as a prompt (HELM's instructions before it; each note's first 2,600 characters, past the
    window yet quick for HELM's loop), and the lengths around the cut."""
    notes = [p.read_text(encoding="utf-8")[:2600] for p in sorted(synthetic_notes.directory.iterdir())]
    edge = "x" * (WINDOW - COMPLETION)
    return [f"Here are information about a patient.\nPatient Notes: {note}\nAnswer:" for note in notes] + [
        edge[:-1], edge, edge + "é", edge + "é" * 300, "",
    ]  # fmt: skip


def test_the_bisection_cuts_every_prompt_where_helms_loop_cuts_it(synthetic_notes: SyntheticNotes) -> None:
    service = window_service()
    fast = bisected(HELMS_OWN)
    cut = 0
    for text in texts(synthetic_notes):
        helms = HELMS_OWN(service, text, COMPLETION)
        assert fast(service, text, COMPLETION) == helms
        cut += helms != text
    assert cut >= 5, "most synthetic notes are longer than simple/model1's window: the tests truncate"


def test_another_tokenizer_keeps_helms_loop() -> None:
    calls: list[str] = []

    def helms(self: object, text: str, completion: int = 0) -> str:
        calls.append(text)
        return text

    assert bisected(helms)(window_service("other/tokenizer"), "a note", COMPLETION) == "a note"
    assert calls == ["a note"]


def test_the_helm_binaries_the_tests_run_load_it() -> None:
    """As ``helm-run`` starts: this venv's Python with the tests' environment (``user_env``)."""
    check = f"import {MODULE} as m; print(hasattr(m.LocalWindowService.truncate_from_right, '__wrapped__'))"
    done = subprocess.run(
        [str(BIN / "python"), "-c", check], env=user_env(), capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "True"
