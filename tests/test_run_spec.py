"""The `mtsamples_procedures` run entry: ours wins, HELM's others survive, names never collide."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helm.benchmark.run_spec import RunSpec
from helm.benchmark.run_spec_factory import construct_run_specs
from helm.common.object_spec import parse_object_spec

from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec, resolve_judges

pytestmark = pytest.mark.helm


def annotator_args(spec: RunSpec) -> dict[str, Any]:
    """The arguments of the run spec's annotator (ours, its only one)."""
    assert spec.annotators
    return spec.annotators[0].args


OURS = "helm_mtsamples_ext.run_spec"


@pytest.fixture(scope="module", autouse=True)
def helm_models() -> None:
    """As `helm-run` does first: HELM's built-in model deployments (simple/model1 among them)."""
    from helm.benchmark.config_registry import register_builtin_configs_from_helm_package

    register_builtin_configs_from_helm_package()


def _in_fresh_python(code: str) -> dict:
    """Run `code` in a new interpreter (a clean HELM registry) and return the JSON it prints last."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


REGISTRY_PROBE = """
    import json
    from helm.benchmark import run_spec
    {load}
    run_spec.discover_run_spec_functions()
    registry = run_spec._REGISTERED_RUN_SPEC_FUNCTIONS
    fn = registry["mtsamples_procedures"]
    print(json.dumps({{"module": fn.__module__, "names": sorted(registry),
                      "mmlu": registry["mmlu"].__module__}}))
"""


def test_helm_alone_has_its_builtin_entry() -> None:
    """Baseline for the tests below: without our plugin HELM's built-in function answers the name."""
    seen = _in_fresh_python(REGISTRY_PROBE.format(load="pass"))
    assert seen["module"] == "helm.benchmark.run_specs.medhelm_run_specs"


@pytest.mark.parametrize(
    "load",
    [
        "from helm.benchmark.run import load_entry_point_plugins; load_entry_point_plugins()",
        "from helm.benchmark.run import import_user_plugins; import_user_plugins(['helm_mtsamples_ext'])",
        "from helm.benchmark.run import load_entry_point_plugins, import_user_plugins; "
        "load_entry_point_plugins(); import_user_plugins(['helm_mtsamples_ext'])",
    ],
    ids=["entry-point", "--plugins", "both"],
)
def test_ours_wins_and_every_other_entry_survives(load: str) -> None:
    """However the plugin arrives, `mtsamples_procedures` is ours and no other run entry is lost."""
    baseline = _in_fresh_python(REGISTRY_PROBE.format(load="pass"))
    seen = _in_fresh_python(REGISTRY_PROBE.format(load=load))
    assert seen["module"] == OURS
    assert seen["names"] == baseline["names"]
    assert seen["mmlu"] == baseline["mmlu"]


def test_other_helm_run_entries_still_build() -> None:
    """Replacing our entry must not break HELM's own: a built-in entry still expands to RunSpecs."""
    import helm_mtsamples_ext.plugin  # noqa: F401

    specs = construct_run_specs(parse_object_spec("mmlu:subject=anatomy,model=simple/model1"))
    assert specs and specs[0].scenario_spec.class_name.endswith("MMLUScenario")


def test_run_entry_builds_our_pipeline_with_helms_adapter() -> None:
    """The spec uses our scenario, annotator and metric, and keeps HELM's adapter for MedHELM parity."""
    import helm_mtsamples_ext.plugin  # noqa: F401

    (spec,) = construct_run_specs(parse_object_spec("mtsamples_procedures:model=simple/model1"))
    assert spec.name == "mtsamples_procedures:model=simple_model1"
    assert spec.scenario_spec.class_name == "helm_mtsamples_ext.scenario.MTSamplesProceduresScenario"
    assert spec.annotators and spec.annotators[0].class_name == "helm_mtsamples_ext.annotator.JudgeAnnotator"
    assert any(m.class_name == "helm_mtsamples_ext.metric.MTSamplesProceduresMetric" for m in spec.metric_specs)
    from helm.benchmark.run_specs.medhelm_run_specs import get_mtsamples_procedures_spec as helms

    assert spec.adapter_spec == replace(helms().adapter_spec, model="simple/model1", model_deployment="simple/model1")
    assert spec.adapter_spec.input_prefix.startswith("Patient Notes")
    assert (spec.adapter_spec.max_tokens, spec.adapter_spec.max_train_instances) == (512, 0)
    assert annotator_args(spec)["judges"] == [
        {
            "name": "gpt-4o-mini",
            "model": "openai/gpt-4o-mini",
            "model_deployment": "openai/gpt-4o-mini",
            "base_url": None,
        }
    ]


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"extraction": "sections"},
        {"judges": "openai/gpt-4o-mini+openai/gpt-4o"},
        {"judge_prompt": "helm"},
        {"use_think": "true"},
        {"judge_timeout": "30"},
        {"judges": "qwen", "judge_base_url": "http://127.0.0.1:8000/v1"},
        {"judges": "qwen", "judge_base_url": "http://127.0.0.1:8001/v1"},
    ],
)
def test_every_non_default_argument_is_in_the_name(args: dict[str, str]) -> None:
    """Two variants never overwrite each other in one suite: each argument shows in the name."""
    name = get_mtsamples_procedures_spec(**args).name
    for key in args:
        assert f"{key}=" in name
    assert "/" not in name and "://" not in name and " " not in name


def test_variant_names_are_distinct() -> None:
    """Same served model at two endpoints, or two configs: distinct run names (URLs go in as hashes)."""
    a = get_mtsamples_procedures_spec(judges="qwen", judge_base_url="http://127.0.0.1:8000/v1").name
    b = get_mtsamples_procedures_spec(judges="qwen", judge_base_url="http://127.0.0.1:8001/v1").name
    assert a != b and "127.0.0.1" not in a


def test_jury_config_is_helms_yaml(tmp_path: Path) -> None:
    """MedHELM users reuse their jury YAML; its path goes into the run name as a short hash."""
    config = tmp_path / "jury.yaml"
    config.write_text(
        "judges:\n"
        "  - {name: gpt, model: openai/gpt-4o-2024-05-13, model_deployment: stanfordhealthcare/gpt-4o-2024-05-13}\n"
        "  - {name: claude, model: anthropic/claude-3-7-sonnet-20250219,"
        " model_deployment: stanfordhealthcare/claude-3-7-sonnet-20250219}\n"
    )
    spec = get_mtsamples_procedures_spec(jury_config_path=str(config))
    assert [j["name"] for j in annotator_args(spec)["judges"]] == ["gpt", "claude"]
    assert str(tmp_path) not in spec.name


def test_judge_urls_match_judges_by_position() -> None:
    """One URL serves every judge; several URLs pair up with the judges in order; a URL carrying a key
    (user:password@, ?api_key=, ?token=) is refused, since run entries are written to run_spec.json."""
    one = resolve_judges("a+b", None, "http://127.0.0.1:1/v1")
    assert [j.base_url for j in one] == ["http://127.0.0.1:1/v1"] * 2
    two = resolve_judges("a+b", None, "http://127.0.0.1:1/v1+http://127.0.0.1:2/v1")
    assert [j.base_url for j in two] == ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]
    with pytest.raises(ValueError, match="3 judges"):
        resolve_judges("a+b+c", None, "http://127.0.0.1:1/v1+http://127.0.0.1:2/v1")
    for leaky in ("http://user:secret@127.0.0.1:1/v1", "http://127.0.0.1:1/v1?api_key=sk-1", "http://h/v1?token=t"):
        with pytest.raises(ValueError, match="JUDGE_API_KEY"):
            resolve_judges("a", None, leaky)
    assert (resolve_judges("a", None, "https://h/v1?api-version=2024-06-01")[0].base_url or "").endswith("2024-06-01")


def test_duplicate_judges_get_distinct_names() -> None:
    """Records are keyed by judge name, so the same model twice must not overwrite itself."""
    assert [j.name for j in resolve_judges("x/m+y/m", None, None)] == ["m", "m-2"]


@pytest.mark.parametrize(
    "args, message",
    [
        ({"extraction": "fancy"}, "extraction"),
        ({"judge_prompt": "other"}, "judge_prompt"),
        ({"use_think": "maybe"}, "use_think"),
        ({"judge_timeout": "0"}, "judge_timeout"),
        ({"judge_timeout": "abc"}, "judge_timeout must be a positive number of seconds, got 'abc'"),
        ({"judges": "failed_judges"}, "may not be named"),
        ({"judges": ""}, "judges= must name one or more judges"),
        ({"judges": "a+"}, "judges= must name one or more judges"),
        ({"judge_structured": "xml"}, "judge_structured must be one of auto, json_schema, json_object, off"),
        ({"judge_max_wait": "-1"}, "judge_max_wait"),
        ({"judge_max_concurrency": "2.5"}, "judge_max_concurrency must be a positive whole number"),
        ({"judge_rpm": "0"}, "judge_rpm"),
        ({"max_unjudged": "1.5"}, "max_unjudged must be a share between 0 and 1"),
        ({"judge_timout": "5"}, "unknown argument"),
        ({"judge_batch": "yes please"}, "judge_batch must be true or false"),
        ({"judge_batch_fallback": "maybe"}, "judge_batch_fallback must be true or false"),
        ({"judges": "a+b", "judge_base_url": "http://h/v1", "judge_family": "Meta+"}, "a family per judge"),
    ],
)
def test_bad_arguments_fail_clearly(args: dict[str, str], message: str) -> None:
    """A typo in a run entry is an error naming the argument, not a silently different run."""
    with pytest.raises(ValueError, match=message):
        get_mtsamples_procedures_spec(**args)


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("http://127.0.0.1:1/v1?auth=SECRETVALUE", "'auth'"),
        ("http://127.0.0.1:1/v1?sig=SECRETVALUE&api-version=1", "'sig'"),
        ("http://user:SECRETVALUE@127.0.0.1:1/v1", "user:password@"),
        ("http://127.0.0.1:1/v1;key=SECRETVALUE", ";parameters"),
        ("http://127.0.0.1:1/v1;SECRETVALUE", ";parameters"),
        ("http://127.0.0.1:1/v1#SECRETVALUE", "#fragment"),
        ("http://127.0.0.1:1/v1#", "#fragment"),
        ("http://127.0.0.1:1/sk-SECRETVALUE/v1", "path segment that reads as a key"),
        ("http://127.0.0.1:1/v1/aB3dE5gH7jK9mN1pQ3rS5tUSECRETVALUE", "path segment that reads as a key"),
        ("http://127.0.0.1:1/v1?api-version=sk-SECRETVALUE", "a value that reads as a key"),
        ("htp//user:SECRETVALUE@127.0.0.1:1/v1", "must be an http(s) URL"),
        ("http:/user:SECRETVALUE@127.0.0.1/v1", "must be an http(s) URL"),
        ("http://user:SECRETVALUE@127.0.0.1:port/v1", "must be an http(s) URL"),
        ("http://SECRETVALUE@127.0.0.1:1/v1", "user:password@"),
    ],
)
def test_a_judge_url_that_could_carry_a_secret_is_refused_without_echoing_it(url: str, named: str) -> None:
    """Run entries land in run_spec.json, scenario_state.json and logs: a key-like part anywhere in the URL (its
    user, a query parameter but api-version, ;parameters, a fragment, a path segment) is refused, and the message
    names the part, never the URL nor the value, a mistyped URL included."""
    with pytest.raises(ValueError) as raised:
        get_mtsamples_procedures_spec(judges="a", judge_base_url=url)
    assert named in str(raised.value) and "SECRETVALUE" not in str(raised.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:1/v1",
        "https://acme.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18?api-version=2024-02-15-preview",
        "http://127.0.0.1:1/serving-endpoints/3f2b9c1e-8a4d-4e6f-9b1a-2c3d4e5f6a7b/v1",
        "http://localhost:11434/v1/",
    ],
)
def test_ordinary_judge_urls_are_accepted(url: str) -> None:
    spec = get_mtsamples_procedures_spec(judges="a", judge_base_url=url)
    assert annotator_args(spec)["judges"][0]["base_url"] == url


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"judges": "a,b"}, "may not hold ','"),
        ({"judges": "a=b"}, "may not hold '='"),
        ({"judges": "a b"}, "a space or a control character"),
        ({"judges": "a\x1b[2Jb"}, "a space or a control character"),
        ({"judge_timeout": "inf"}, "judge_timeout must be a positive number of seconds"),
        ({"judge_timeout": "-inf"}, "judge_timeout must be"),
        ({"judge_timeout": "nan"}, "judge_timeout must be"),
        ({"judge_max_wait": "1e999"}, "judge_max_wait must be"),
        ({"judge_rpm": "inf"}, "judge_rpm must be"),
        ({"judge_max_concurrency": "inf"}, "judge_max_concurrency must be"),
    ],
)
def test_separators_in_names_and_non_finite_numbers_get_one_line(args: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        get_mtsamples_procedures_spec(judge_base_url="http://127.0.0.1:1/v1", **args)
    assert "\n" not in str(raised.value) and "\x1b" not in str(raised.value)


def test_new_judging_arguments_reach_the_annotator_and_metric_only_when_set() -> None:
    """Defaults stay out of run_spec.json (earlier runs keep their names and files); set ones are passed."""
    plain = get_mtsamples_procedures_spec()
    assert set(annotator_args(plain)) == {"judges", "judge_prompt", "use_think", "judge_timeout"}
    tuned = get_mtsamples_procedures_spec(
        judge_structured="off", judge_max_wait="60", judge_max_concurrency="4", judge_rpm="500", max_unjudged="0.1"
    )
    args = annotator_args(tuned)
    assert (args["judge_structured"], args["judge_max_wait"], args["judge_max_concurrency"], args["judge_rpm"]) == (
        "off",
        60.0,
        4,
        500.0,
    )
    assert tuned.metric_specs[-1].args["max_unjudged"] == 0.1
    assert "max_unjudged=0.1" in tuned.name and "judge_rpm=500" in tuned.name


def test_judge_batch_reaches_the_annotator_but_not_the_run_name() -> None:
    """How judging is paid changes no result: a batch-judged run is the same run as a direct one."""
    batched = get_mtsamples_procedures_spec(judge_batch="true")
    assert annotator_args(batched)["judge_batch"] is True
    assert batched.name == get_mtsamples_procedures_spec().name
    assert "judge_batch" not in annotator_args(get_mtsamples_procedures_spec(judge_batch="false"))


def test_judge_batch_fallback_reaches_the_annotator_but_not_the_run_name() -> None:
    strict = get_mtsamples_procedures_spec(judge_batch="true", judge_batch_fallback="false")
    assert annotator_args(strict)["judge_batch_fallback"] is False
    assert strict.name == get_mtsamples_procedures_spec().name


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            {"judgs": "foo"},
            r"unknown argument\(s\) judgs \(did you mean judges\?\); mtsamples_procedures takes extraction,",
        ),
        ({"judge_timout": "5"}, r"unknown argument\(s\) judge_timout \(did you mean judge_timeout\?\);"),
        ({"modle": "simple/model1"}, r"unknown argument\(s\) modle \(did you mean model\?\);"),
        ({"zzz": "1"}, r"unknown argument\(s\) zzz; mtsamples_procedures takes"),
    ],
)
def test_an_unknown_argument_names_the_closest_known_one(args: dict[str, str], line: str) -> None:
    """A typo gets the argument it most likely meant; a name like none of them gets the list alone."""
    with pytest.raises(ValueError, match=line):
        get_mtsamples_procedures_spec(**args)


def test_a_hosted_judges_family_is_its_creator_and_judge_family_declares_one_without_renaming_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The family comes from HELM's metadata as helm-run loaded it (prod_env/ included); an endpoint judge's
    registered metadata names only its host, so it has the family judge_family declares, or none. Declaring one
    later changes no result, so the run keeps its name (and its cache)."""
    from helm.benchmark.model_metadata_registry import get_unknown_model_metadata

    from helm_mtsamples_ext.helm_host import families

    meta = replace(get_unknown_model_metadata("meta/llama-3.3-70b"), creator_organization_name="Meta")
    monkeypatch.setattr(families, "MODEL_NAME_TO_MODEL_METADATA", {meta.name: meta})
    (hosted,) = resolve_judges("meta/llama-3.3-70b", None, None)
    assert hosted.family == "Meta"
    assert resolve_judges("meta/llama-3.3-70b", None, None, "Acme")[0].family == "Acme"
    assert resolve_judges("meta/llama-3.3-70b", None, "http://127.0.0.1:1/v1")[0].family is None
    url = "http://127.0.0.1:1/v1"
    declared = get_mtsamples_procedures_spec(judges="q+l", judge_base_url=url, judge_family="Alibaba+Meta")
    assert [j["family"] for j in annotator_args(declared)["judges"]] == ["Alibaba", "Meta"]
    assert declared.name == get_mtsamples_procedures_spec(judges="q+l", judge_base_url=url).name
