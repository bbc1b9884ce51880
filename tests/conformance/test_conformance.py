"""The conformance runner and the published vectors (protocol/vectors, docs/rules.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from dudo.cli import main
from dudo.conformance import run_paths, run_vector
from dudo.engine import PRESETS, RULE_ERROR_CODES

from ..http_schemas import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "protocol" / "vectors"
SCHEMAS = ROOT / "protocol" / "schemas"
SEEDS = ROOT / "docs" / "seeds"
ALL = sorted(VECTORS.rglob("*.json"))
# The rules vectors (the seeds' derivation vectors, fairness/, are of another format:
# tests/engine/test_fairness.py).
RULES = [p for p in ALL if p.parent.name != "fairness"]


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def validator() -> Draft202012Validator:
    schema = load(SCHEMAS / "rules-vector.schema.json")
    return Draft202012Validator(schema, registry=REGISTRY)


def test_at_least_sixty_published_vectors_all_pass() -> None:
    assert len(ALL) >= 60
    report = run_paths([VECTORS])
    assert report.failures == []
    assert (report.passed, report.failed) == (len(ALL), 0)


@pytest.mark.parametrize("path", RULES, ids=lambda p: str(p.relative_to(VECTORS)))
def test_vector_matches_schema_and_traces_to_a_seed(path: Path) -> None:
    vector = load(path)
    validator().validate(vector)
    if path.parent.name == "seating":
        # Tournament seating is our extension: the seeds know one table only.
        assert "source" not in vector and "Seats between rounds" in vector["note"]
        return
    source = vector["source"]
    seed_text = (SEEDS / source["seed"]).read_text(encoding="utf-8")
    assert source["quote"] in seed_text, "the quote must appear verbatim in the seed"


def test_vectors_cover_every_error_code_and_preset_and_option() -> None:
    vectors = [load(p) for p in RULES]
    codes = {s.get("error") for v in vectors for r in v["rounds"] for s in r.get("steps", [])}
    assert codes >= RULE_ERROR_CODES
    assert set(PRESETS) <= {v["rules"].get("preset", "classic") for v in vectors}
    overridden = {k for v in vectors for k in v["rules"] if k != "preset"}
    assert {
        "start_dice",
        "max_dice",
        "wild_ones",
        "opening_ones",
        "calza",
        "calza_needs_lost_die",
        "palifico",
        "palifico_wild_ones",
        "loser_chooses_direction",
    } <= overridden
    calza_modes = {v["rules"].get("calza") for v in vectors}
    assert {"anyone"} <= calza_modes
    assert {v["source"]["seed"] for v in vectors if "source" in v} == {
        p.name for p in SEEDS.glob("*.txt")
    }


def test_seating_vectors_cover_leave_join_halt_refill_and_every_refusal() -> None:
    seating = [load(p) for p in sorted((VECTORS / "seating").glob("*.json"))]
    rounds = [r for v in seating for r in v["rounds"]]
    changes = [r["reseat"] for r in rounds if "reseat" in r]
    assert any(c.get("leave") for c in changes) and any(c.get("join") for c in changes)
    assert any("opener" in c for c in changes)
    refusals = {s["error"] for r in rounds for s in r.get("steps", []) if "reseat" in s}
    assert refusals == {"not_between_rounds", "bad_action"}
    # A halted table (no steps, no winner) and a finished one brought back both appear.
    assert any("steps" not in r and r["expect"]["winner"] is None for r in rounds if "reseat" in r)
    assert any(r.get("expect", {}).get("winner") is not None for r in rounds)


def test_runner_catches_a_reseat_the_engine_refuses_and_one_it_should_have() -> None:
    vector = load(VECTORS / "seating" / "leave-keeps-the-rest-of-the-table.json")
    assert run_vector(vector) == []
    mid_round = copy.deepcopy(vector)
    mid_round["rounds"][1]["steps"].insert(2, {"reseat": {"leave": [2]}, "error": "bad_action"})
    assert "refused with not_between_rounds" in run_vector(mid_round)[0]
    legal = copy.deepcopy(vector)
    legal["rounds"][1]["steps"].insert(0, {"reseat": {"leave": [3]}, "error": "bad_action"})
    legal["rounds"][1]["steps"][0]["reseat"] = {"leave": [0]}
    assert "accepted, the vector expects bad_action" in run_vector(legal)[0]


def test_runner_fails_a_vector_whose_expectation_is_wrong(tmp_path: Path) -> None:
    good = load(VECTORS / "rules" / "dudo" / "bluff-bidder-loses.json")
    assert run_vector(good) == []
    wrong = copy.deepcopy(good)
    wrong["rounds"][0]["expect"]["loser"] = 2
    assert run_vector(wrong) == ["round 0: loser is 1, the vector expects 2"]
    refused = copy.deepcopy(good)
    refused["rounds"][0]["steps"][1]["error"] = "bid_not_higher"
    assert "accepted, the vector expects bid_not_higher" in run_vector(refused)[0]
    wrong_code = copy.deepcopy(good)
    wrong_code["rounds"][0]["steps"].insert(
        1, {"seat": 2, "action": {"type": "dudo"}, "error": "no_bid_yet"}
    )
    assert "refused with not_your_turn" in run_vector(wrong_code)[0]
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    (tmp_path / "good.json").write_text(json.dumps(good))
    report = run_paths([tmp_path])
    assert (report.passed, report.failed) == (1, 1)


def test_cli_prints_failures_and_summary_and_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = load(VECTORS / "rules" / "calza" / "exact-regains-a-die.json")
    wrong = copy.deepcopy(good)
    wrong["rounds"][0]["expect"]["dice_counts"] = [5, 3, 5]
    (tmp_path / "a.json").write_text(json.dumps(good))
    (tmp_path / "b.json").write_text(json.dumps(wrong))
    (tmp_path / "c.json").write_text("{not json")
    assert main(["conformance", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == "1 passed, 2 failed"
    assert any("b.json" in line and "dice_counts" in line for line in lines)
    assert any("c.json" in line and "cannot read" in line for line in lines)
    assert main(["conformance", str(tmp_path / "a.json")]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_cli_missing_path_and_empty_folder_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", str(tmp_path / "nope.json")]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "0 passed, 1 failed"
    assert main(["conformance", str(tmp_path)]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "0 passed, 0 failed"


def test_refused_step_that_changes_state_would_be_reported() -> None:
    # The runner compares serialized bytes around every refused step.
    vector = load(VECTORS / "rules" / "raise" / "repeat-or-lower-is-refused.json")
    assert run_vector(vector) == []
    assert sum(1 for s in vector["rounds"][0]["steps"] if "error" in s) == 3


def test_malformed_vector_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "v.json").write_text(json.dumps({"format": "dudo-rules-vector/1", "rounds": []}))
    report = run_paths([tmp_path])
    assert report.failed == 1 and "malformed vector" in report.failures[0]


def test_the_seeds_derivation_vectors_are_checked_and_a_wrong_answer_is_named() -> None:
    """Issue 55: `dudo conformance rules protocol/vectors` checks the seeds' derivation
    too (format dudo-fairness-vector/1): an implementation that deals otherwise fails."""
    vector = load(VECTORS / "fairness" / "derivation.json")
    assert run_vector(vector) == []
    vector["cases"][0]["rounds"][1]["dice"][0][0] = 7
    vector["cases"][1]["game_secret"] = "00" * 32
    assert run_vector(vector) == [
        "two people: round 2",
        "a person, a bot and a seat that brought no seed: game_secret",
    ]


def test_the_fairness_vectors_match_their_schema() -> None:
    """protocol/vectors/fairness/*.json, the known answers of the seeds' derivation, are
    described by fairness-vector.schema.json (as the rules vectors by theirs)."""
    schema = load(SCHEMAS / "fairness-vector.schema.json")
    Draft202012Validator.check_schema(schema)
    paths = sorted((VECTORS / "fairness").glob("*.json"))
    assert paths
    for path in paths:
        Draft202012Validator(schema).validate(load(path))
    broken = load(paths[0])
    broken["cases"][0]["server_seed"] = "not hex"
    assert list(Draft202012Validator(schema).iter_errors(broken))
