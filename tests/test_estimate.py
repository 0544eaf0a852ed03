"""estimate.py: judge calls, tokens and cost of a run before running it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helm.benchmark.scenarios.scenario import Instance

from helm_mtsamples_ext.estimate import CHARS_PER_TOKEN, VERDICT_TOKENS, Judge, estimate, main
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from helm_mtsamples_ext.report.cost import Price, Prices
from tests.states import request_state
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.helm

NOTE, REFERENCE = "PROCEDURE: Open repair of a left inguinal hernia with mesh. " * 5, "Follow up in two weeks."
JUDGES = (Judge("gpt-4o-mini", "openai/gpt-4o-mini"), Judge("llama", "together/llama"))


def instances(n: int) -> list[Instance]:
    return [request_state(NOTE, reference=REFERENCE, instance_id=f"n{i}").instance for i in range(n)]


def test_every_note_is_one_call_per_judge() -> None:
    assert estimate("e", instances(7), JUDGES, "ours", 512).calls == 14


def test_input_tokens_range_from_an_answer_as_long_as_the_reference_to_max_tokens() -> None:
    prompt = len(build_prompt(NOTE, "", REFERENCE, "ours"))
    got = estimate("e", instances(3), JUDGES, "ours", 512)
    low, high = (prompt + len(REFERENCE)) / CHARS_PER_TOKEN, prompt / CHARS_PER_TOKEN + 512
    assert got.tokens_in == pytest.approx((3 * 2 * low, 3 * 2 * high))


def test_output_tokens_range_over_a_verdicts_size() -> None:
    got = estimate("e", instances(3), JUDGES, "ours", 512)
    assert got.tokens_out == (3 * 2 * VERDICT_TOKENS[0], 3 * 2 * VERDICT_TOKENS[1])


def test_helms_prompt_style_is_estimated_with_helms_template() -> None:
    ours, helms = (estimate("e", instances(1), JUDGES, style, 512).tokens_in for style in ("ours", "helm"))
    assert ours != helms


def test_the_cost_prices_each_judge_on_its_share_of_the_tokens() -> None:
    got = estimate("e", instances(2), JUDGES, "ours", 512)
    prices = Prices({"openai/gpt-4o-mini": Price(1.0, 2.0), "llama": Price(0.0, 0.0)})
    low = (got.tokens_in[0] / 2 * 1.0 + got.tokens_out[0] / 2 * 2.0) / 1e6
    high = (got.tokens_in[1] / 2 * 1.0 + got.tokens_out[1] / 2 * 2.0) / 1e6
    assert got.cost(prices) == pytest.approx((low, high))


def test_a_judge_without_a_price_is_named_instead_of_a_cost() -> None:
    assert estimate("e", instances(1), JUDGES, "ours", 512).cost(Prices({"llama": Price(1, 1)})) == "gpt-4o-mini"


@pytest.fixture
def notes_env(synthetic_notes: SyntheticNotes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name, value in synthetic_notes.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MTSAMPLES_PROCEDURES_CACHE_DIR", raising=False)
    return tmp_path


def test_the_command_counts_the_calls_helm_run_would_make_and_prices_them(
    notes_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = notes_env / "prices.yaml"
    prices.write_text("batch_discount: 0.5\njudges:\n  a: {input: 1, output: 1}\n  b: {input: 1, output: 1}\n")
    entry = "mtsamples_procedures:model=openai/gpt-4o-mini,judges=a+b,judge_base_url=http://127.0.0.1:9/v1"
    args = ["--run-entries", entry, "-m", "5", "--judge-prices", str(prices), "-o", str(notes_env / "out")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "5 notes x 2 judges (a+b)" in out and "judge calls:      10" in out
    assert "as a provider batch:" in out and out.strip().splitlines()[-1].startswith("total: 10 judge calls, $")
    assert (notes_env / "out" / "scenarios" / "mtsamples_procedures").is_dir(), "the notes land where helm-run reads"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("mtsamples_procedures:model=x/y,judge_timeout=abc", "judge_timeout must be a positive number of seconds"),
        ("med_qa:model=x/y", "is not mtsamples_procedures"),
    ],
    ids=["bad-argument", "other-benchmark"],
)
def test_a_bad_run_entry_is_one_error_line(
    entry: str, message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["--run-entries", entry, "-m", "3", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert not os.listdir(tmp_path), "nothing fetched for an entry that cannot run"
