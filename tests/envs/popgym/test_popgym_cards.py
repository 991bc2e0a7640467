"""The native card envs (RepeatPrevious, RepeatFirst, CountRecall, Autoencode, HigherLower) against popgym's."""
import numpy as np
import pytest
import torch

pytest.importorskip("popgym")

from popgym_lockstep import lockstep, wrong  # noqa: E402

from torchrl_memory.config_validation import UserError  # noqa: E402
from torchrl_memory.envs.factory import check_eval_env, make_env  # noqa: E402
from torchrl_memory.envs.popgym import NATIVE_POPGYM, make_native_popgym  # noqa: E402


def dealt_order(deck, kinds):
    """The kinds of a popgym deck's cards in the order ``Deck.deal`` hands them out (from the end)."""
    return [("deal", int(kinds[i])) for i in deck.idx[::-1]]


def one_deck(kinds_attr):
    def translate(real, log):
        return dealt_order(real.deck, getattr(real.deck, kinds_attr)) if log else []
    return translate


def count_recall_translate(real, log):
    if not log:
        return []
    values = dealt_order(real.value_deck, real.deck_idx_type)
    queries = dealt_order(real.query_deck, real.deck_idx_type)
    return [x for pair in zip(values, queries) for x in pair]  # the env deals a value, then a query


def policy_for(correct, n):
    """Row 0, 3, ...: random; 1, 4, ...: always right; 2, 5, ...: always wrong."""
    def policy(row, real, rng):
        if row % 3 == 0:
            return int(rng.integers(n))
        c = correct(real)
        return c if row % 3 == 1 else wrong(c, n)
    return policy


def repeat_previous_correct(real):
    hand = real.deck["player"]
    return int(real.deck.suits_idx[hand[-real.k]]) if len(hand) >= real.k else 0


def autoencode_correct(real):
    hand = real.deck["system"]
    return int(real.deck.suits_idx[hand[-1]]) if int(real.mode) == 0 else 0


def higher_lower_correct(real):
    deck = real.deck
    current = deck.ranks_idx[deck["player"][-1]]
    upcoming = deck.ranks_idx[deck.idx[deck.deck_len - 1]]
    return 0 if upcoming > current else 1  # 0: "higher"


CASES = {
    "RepeatPrevious": (one_deck("suits_idx"), repeat_previous_correct, lambda r: 4),
    "RepeatFirst": (one_deck("suits_idx"), lambda r: int(r.card), lambda r: 4),
    "CountRecall": (count_recall_translate, lambda r: int(r.counts[r.query]), lambda r: r.max_card_count + 1),
    "Autoencode": (one_deck("suits_idx"), autoencode_correct, lambda r: 4),
    "HigherLower": (one_deck("ranks_idx"), higher_lower_correct, lambda r: 2),
}


@pytest.mark.parametrize("family", list(CASES))
@pytest.mark.parametrize("difficulty", ["Easy", "Medium", "Hard"])
def test_card_env_steps_as_popgym(family, difficulty):
    """Six rows (random, right, wrong answers), two episodes each: identical observations, rewards
    and ends; the right answers score popgym's maximum return +1, the wrong ones -1."""
    translate, correct, n_actions = CASES[family]
    import gymnasium as gym

    n = n_actions(gym.make(f"popgym-{family}{difficulty}-v0").unwrapped)
    length = make_native_popgym(family + difficulty).max_episode_steps
    ends = lockstep(family + difficulty, translate, policy_for(correct, n), num_envs=6, steps=2 * length)
    assert ends[(0, True, False)] == ends[(1, True, False)] == ends[(2, True, False)] == 4  # every episode terminates at the full length
    if family != "HigherLower":  # equal ranks pay 0 whatever the guess
        assert ends[("return", 1, 1.0)] == 4 and ends[("return", 2, -1.0)] == 4
    else:
        returns = {k[2] for k in ends if k[0] == "return" and k[1] == 1}
        assert all(0.8 < r <= 1.0 for r in returns) and all(r < -0.8 for k in ends if k[0] == "return" and k[1] == 2 for r in [k[2]])


@pytest.mark.parametrize("name", list(NATIVE_POPGYM))
def test_native_specs_match_the_gymnasium_path(name):
    """Same observation size and action space as popgym's env through ``make_env``, so
    ``--eval-env-id popgym-...`` can evaluate a policy trained on the native env; same episode limit."""
    gym_env = make_env(f"popgym-{name}-v0", 2, normalize_obs=False)
    native = make_native_popgym(name, 2)
    check_eval_env(native, gym_env, f"native:popgym-{name}-v0", f"popgym-{name}-v0")
    assert native.observation_spec["observation"].dtype == gym_env.observation_spec["observation"].dtype == torch.float32
    if gym_env.max_episode_steps is not None:
        assert native.max_episode_steps == gym_env.max_episode_steps


def test_unknown_name_lists_the_native_envs():
    with pytest.raises(UserError, match="no tensor-native version .*RepeatPreviousEasy.*popgym-<Name>-v0"):
        make_native_popgym("LabyrinthEscapeEasy", 1)


def _popgym_draws(gym_id, resets, read):
    import gymnasium as gym

    real = gym.make(gym_id).unwrapped
    return np.array([read(real, real.reset(seed=s)) for s in range(resets)])


@pytest.mark.parametrize("name,kinds,attr", [("RepeatPreviousEasy", 4, "suits_idx"), ("HigherLowerMedium", 13, "ranks_idx")])
def test_dealt_cards_are_distributed_as_popgyms(name, kinds, attr):
    """Cards by position in the deal: each kind about equally often at every position (a
    uniformly shuffled deck), for popgym's decks and the native ones alike."""
    env = make_native_popgym(name, 2000, seed=1)
    td = env.reset()
    native = [td["card"].reshape(-1)]
    for _ in range(5):
        td["action"] = torch.zeros(2000, dtype=torch.long)
        td = env.step(td)["next"]
        native.append(td["card"].reshape(-1))
    native = torch.stack(native, 1).numpy()  # [envs, first six cards]
    real = _popgym_draws(f"popgym-{name}-v0", 600, lambda r, _: getattr(r.deck, attr)[r.deck.idx[::-1][:6]])
    for draws in (native, real):
        freq = np.stack([(draws == k).mean(0) for k in range(kinds)])  # [kind, position]
        assert np.abs(freq - 1 / kinds).max() < 5 * np.sqrt((1 / kinds) / len(draws)), freq
    # without replacement: the first two cards share a kind less often than with replacement
    for draws in (native, real):
        same = (draws[:, 0] == draws[:, 1]).mean()
        per_kind = 52 * (2 if "Medium" in name else 1) // kinds
        expected = (per_kind - 1) / (52 * (2 if "Medium" in name else 1) - 1)
        assert abs(same - expected) < 5 * np.sqrt(expected / len(draws)), (same, expected)


def test_count_recall_decks_are_independent_and_full():
    """CountRecall's value and query decks: each holds every card once (the value counts run down
    to zero at the episode's end) and the two are drawn independently."""
    env = make_native_popgym("CountRecallEasy", 3000, seed=2)
    td = env.reset()
    agree = (td["value"] == td["query"]).float().mean().item()
    assert abs(agree - 0.5) < 0.05
    for _ in range(51):  # a full episode: cards - 1 steps
        td["action"] = torch.zeros(3000, dtype=torch.long)
        out = env.step(td)
        td = out["next"]
    assert bool(out["next", "terminated"].all()) and int(td["value_counts"].sum()) == 0 and int(td["query_counts"].sum()) == 0


def test_partial_reset_keeps_the_other_rows():
    """A reset of some rows (TorchRL's auto-reset) leaves the others' state as it was."""
    env = make_native_popgym("RepeatPreviousEasy", 8, seed=0)
    td = env.reset()
    for _ in range(3):
        td["action"] = torch.zeros(8, dtype=torch.long)
        td = env.step(td)["next"]
    mask = torch.tensor([True, False] * 4).reshape(8, 1)
    td["_reset"] = mask
    out = env.reset(td.clone())
    keep = ~mask.reshape(-1)
    assert torch.equal(out["history"][keep], td["history"][keep]) and (out["dealt"][keep] == 4).all()
    assert (out["dealt"][~keep] == 1).all()
