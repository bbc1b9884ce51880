"""Every policy, under every rule option, plays only legal actions and games end."""

from __future__ import annotations

import random

import pytest

from dudo.bots.arena import play
from dudo.bots.hard import Belief, count_distribution, hands, posterior
from dudo.bots.levels import POLICIES
from dudo.bots.policies import baseline, exact_is_most_likely, strength
from dudo.engine import Bid, Rules, new_game, preset, seat_view
from dudo.engine.bids import min_quantity
from dudo.engine.odds import at_least

RULE_SETS = {
    "classic": {"preset": "classic"},
    "liars-dice": {"preset": "liars-dice"},
    "lizumo": {"preset": "lizumo"},
    "cacho": {"preset": "cacho"},
    "no-wild-palifico-calza": {"preset": "classic", "wild_ones": False},
    "palifico-wild": {"preset": "classic", "palifico_wild_ones": True, "start_dice": 3},
    "calza-anyone-lost-die": {"preset": "classic", "calza": "anyone", "calza_needs_lost_die": True},
    "direction": {"preset": "classic", "loser_chooses_direction": True, "start_dice": 3},
    "opening-ones": {"preset": "classic", "opening_ones": "always", "start_dice": 2},
    "one-die-big-cap": {"preset": "classic", "start_dice": 1, "max_dice": 3},
    "assisted": {"preset": "cacho", "assisted": True, "start_dice": 3},
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("rules_name", sorted(RULE_SETS))
def test_policy_plays_legal_games_to_the_end(policy: str, rules_name: str) -> None:
    rules = Rules.from_dict(RULE_SETS[rules_name])
    for seats in sorted({rules.min_players, 4}):
        for game in range(2):
            other = "baseline" if policy != "baseline" else "random"
            lineup = [policy if s % 2 == game % 2 else other for s in range(seats)]
            rng = random.Random(f"{policy}:{rules_name}:{seats}:{game}")
            result = play(rules, lineup, rng.randbytes(32), rng.randrange(seats), str(game))
            # `play` applies every decision through the engine: an illegal one raises.
            assert 0 <= result["winner"] < seats


def test_strength_orders_bids_as_the_raising_rules_do() -> None:
    for wild in (True, False):
        faces = range(1, 7)
        for prev in [(q, f) for q in range(1, 9) for f in faces]:
            for face in faces:
                floor = min_quantity(prev, face, wild)
                # the lowest raise on a face is stronger; one less is not
                assert strength(floor, face, wild) > strength(*prev, wild)
                if floor > 1:
                    assert strength(floor - 1, face, wild) <= strength(*prev, wild)


def test_baseline_follows_its_definition() -> None:
    state = new_game(preset("classic"), 2, bytes(32))
    state.deal([[2, 2, 2, 5, 6], [3, 3, 4, 4, 6]])
    view = {"seat": 0, "game": seat_view(state, 0)}
    action = baseline(view, random.Random(0))
    # the strongest bid at least 50% likely from its own dice: it holds three 2s
    assert action["type"] == "bid"
    chosen = (action["quantity"], action["face"])
    game = view["game"]
    from dudo.bots.policies import bid_probability, legal_raises

    likely = [b for b in legal_raises(game) if bid_probability(game, *b) >= 0.5]
    assert chosen in likely
    assert all(strength(*b, True) <= strength(*chosen, True) for b in likely)


def test_calza_when_the_exact_count_is_the_mode() -> None:
    state = new_game(preset("classic"), 2, bytes(32), dice_counts=[4, 5])
    state.deal([[2, 2, 3, 4], [5, 5, 5, 6, 6]])
    state.apply(0, Bid(4, 5))
    view = {"seat": 1, "game": seat_view(state, 1)}
    # It holds three 5s; of 4 unseen dice (p = 1/3 each) exactly one more is the mode
    # (P = 0.395, against 0.198 for none and 0.296 for two).
    assert exact_is_most_likely(view["game"], 4, 5)
    assert not exact_is_most_likely(view["game"], 5, 5)
    assert baseline(view, random.Random(0)) == {"type": "calza"}


def test_hands_enumerate_every_multiset_with_its_probability() -> None:
    for k in range(1, 6):
        all_hands = hands(k)
        assert abs(sum(p for _, p in all_hands) - 1) < 1e-12
        assert all(sum(c) == k for c, _ in all_hands)
    assert len(hands(5)) == 252


@pytest.mark.parametrize("wild", [True, False])
def test_without_bids_the_belief_is_the_binomial(wild: bool) -> None:
    beliefs = [posterior(k, [], 14, wild, False) for k in (5, 4)]
    for face in range(1, 7):
        dist = count_distribution(beliefs, face, wild)
        p_face = 1 / 3 if wild and face != 1 else 1 / 6
        for need in range(11):
            assert abs(sum(dist[need:]) - at_least(need, 9, wild and face != 1)) < 1e-9, p_face


def test_a_bid_moves_the_belief_toward_its_face() -> None:
    prior = count_distribution([posterior(5, [], 10, True, False)], 6, True)
    after = count_distribution([posterior(5, [(4, 6)], 10, True, False)], 6, True)
    mean = lambda d: sum(i * p for i, p in enumerate(d))  # noqa: E731
    assert mean(after) > mean(prior) + 0.5


def test_belief_uses_only_the_view() -> None:
    state = new_game(preset("classic"), 3, bytes(range(32)))
    state.apply(state.turn, Bid(2, 4))
    seat = state.turn
    view = seat_view(state, seat)
    belief = Belief({**view, "seat": seat})
    other_hands = [h for s, h in enumerate(state.hands) if s != seat]
    # re-dealing the hidden dice changes nothing the belief can see
    state.hands = [
        state.hands[seat] if s == seat else tuple(sorted(h[::-1]))
        for s, h in enumerate(state.hands)
    ]
    assert Belief({**seat_view(state, seat), "seat": seat}).true(3, 4) == belief.true(3, 4)
    assert other_hands


def test_baseline_chooses_what_its_definition_says_by_brute_force() -> None:
    """The fast baseline (one threshold per face) against the definition, bid by bid."""
    from dudo.bots.policies import bid_probability, legal_raises, ones_wild
    from dudo.engine.odds import exactly

    rng = random.Random(4)
    checked = 0
    while checked < 600:
        rules = preset(
            rng.choice(["classic", "liars-dice", "lizumo", "cacho"]), start_dice=rng.randint(1, 5)
        )
        state = new_game(rules, rng.randint(rules.min_players, 6), rng.randbytes(32))
        for _ in range(rng.randint(0, 4)):
            bids = [a for a in state.legal_actions(state.turn) if isinstance(a, Bid)]
            if not bids:
                break
            state.apply(state.turn, rng.choice(bids[:6]))
        if state.phase != "bidding":
            continue
        seat = state.turn
        game = seat_view(state, seat)
        wild = ones_wild(game)
        expected = None
        standing = game["bids"][-1] if game["bids"] else None
        if standing and game["legal"]["calza"]:
            _, q, f = standing
            counts = wild and f != 1
            need = q - sum(1 for d in game["dice"] if d == f or (counts and d == 1))
            unseen = game["dice_in_play"] - len(game["dice"])
            ps = [exactly(k, unseen, counts) for k in range(unseen + 1)]
            if 0 <= need <= unseen and all(
                ps[k] < ps[need] for k in range(unseen + 1) if k != need
            ):
                expected = {"type": "calza"}
        if expected is None:
            likely = [b for b in legal_raises(game) if bid_probability(game, *b) >= 0.5]
            if likely:
                q, f = max(likely, key=lambda b: strength(*b, wild))
                expected = {"type": "bid", "quantity": q, "face": f}
            elif game["legal"]["dudo"]:
                expected = {"type": "dudo"}
        if expected is None:
            continue
        assert baseline({"seat": seat, "game": game}, random.Random(0)) == expected
        checked += 1


def test_normal_opens_below_what_the_table_likely_holds() -> None:
    """The opening is a bid 90% likely from its own dice (at most one less): with 20
    dice and ones wild never above its own matches plus a third of the hidden dice."""
    from dudo.bots.policies import _need, normal

    rules = preset("classic")
    for deal in range(200):
        rng = random.Random(deal)
        state = new_game(rules, 4, rng.randbytes(32), opener=0)
        view = {"seat": 0, "game": seat_view(state, 0)}
        move = normal(view, rng)
        assert move["type"] == "bid" and move["face"] != 1
        held = -_need(view["game"], 0, move["face"])[0]
        assert held == max(-_need(view["game"], 0, f)[0] for f in range(2, 7))  # its best face
        assert move["quantity"] <= held + 15 / 3, (move, view["game"]["dice"])
