"""batch_api.py: the Batch API's input lines, their ids and its limits."""

from __future__ import annotations

from helm_mtsamples_ext.judges.helm_calls.batch.api import chunks, custom_id


def test_batches_stay_within_the_apis_request_and_size_limits() -> None:
    lines = [(f"id{i}", b"x" * 10) for i in range(7)]
    assert [len(c) for c in chunks(lines, max_requests=3, max_bytes=1000)] == [3, 3, 1]
    assert [len(c) for c in chunks(lines, max_requests=100, max_bytes=25)] == [2, 2, 2, 1]


def test_a_request_has_the_same_custom_id_in_every_run_and_another_request_another() -> None:
    """The id is a hash of HELM's cache key (key order aside): a re-run finds its answer and its batch by it."""
    key = {"model": "m", "messages": [{"role": "user", "content": "note 1"}]}
    same = {"messages": [{"role": "user", "content": "note 1"}], "model": "m"}
    other = {**key, "messages": [{"role": "user", "content": "note 2"}]}
    assert custom_id(key) == custom_id(same) != custom_id(other)
    assert custom_id(key).startswith("mts-") and len(custom_id(key)) == 4 + 40
