"""POPGym's card envs, tensor-native: RepeatPrevious, RepeatFirst, CountRecall, Autoencode, HigherLower.

Each mirrors the popgym class of the same name (``popgym/envs/*.py``): the same observations
(one-hot, as ``EncodeObservation`` encodes popgym's Discrete / MultiDiscrete / Tuple spaces),
actions, rewards (every episode's return lies in [-1, 1]) and episode lengths. A deck is held
as the count of cards of each kind left to deal (``base.Draws.deal``); popgym's deck lists
``num_decks`` x 52 cards, card ``i`` of suit ``i % 4``, rank ``(i // 4) % 13`` and colour ``i % 2``.
"""
from __future__ import annotations

import torch
from torchrl.data import Unbounded

from .base import PopGymEnvBase, one_hot

DECK_SIZE = 52
KINDS = {"suits": 4, "ranks": 13, "colors": 2}


class CardEnv(PopGymEnvBase):
    """A card env over ``num_decks`` decks whose cards are told apart by ``kind``."""

    kind = "suits"

    def __init__(self, num_decks: int = 1, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if num_decks < 1:
            raise ValueError(f"num_decks must be >= 1, got {num_decks}")
        self.num_decks = int(num_decks)
        self.num_cards = DECK_SIZE * self.num_decks
        self.num_kinds = KINDS[self.kind]
        self.per_kind = self.num_cards // self.num_kinds
        super().__init__(num_envs=num_envs, device=device, seed=seed)

    def _int_spec(self, *shape: int, dtype: torch.dtype = torch.int64) -> Unbounded:
        return Unbounded(shape=(*self.batch_size, *shape), dtype=dtype, device=self.device)

    def _full_deck(self, k: int) -> torch.Tensor:
        return torch.full((k, self.num_kinds), self.per_kind, dtype=torch.int64, device=self.device)

    def _deal(self, counts: torch.Tensor, rows: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """(the kind of the card dealt [k, 1], the counts without it)."""
        card = self.draws.deal(counts, rows)
        return card, counts - one_hot(card, self.num_kinds).to(counts.dtype)

    def _zeros(self, k: int) -> torch.Tensor:
        return torch.zeros((k, 1), dtype=torch.int64, device=self.device)


class RepeatPrevious(CardEnv):
    """Answer the suit of the card dealt ``k`` steps ago (popgym ``RepeatPrevious``).

    Reward +-1 / (cards - k) from the k-th step on, 0 before; ``cards - 1`` steps, ending terminated.
    State: ``"counts"`` (suits left), ``"history"`` (the last ``k`` suits, card ``j`` at slot ``j % k``),
    ``"card"`` (the suit shown), ``"dealt"`` (cards dealt so far).
    """

    def __init__(self, num_decks: int = 1, k: int = 4, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if not 1 <= k < DECK_SIZE * num_decks:
            raise ValueError(f"k must be in [1, {DECK_SIZE * num_decks}), got {k}")
        self.k = int(k)
        self.obs_dim = 4
        super().__init__(num_decks, num_envs, device, seed)
        self.max_episode_steps = self.num_cards - 1
        self.reward_scale = 1 / (self.num_cards - self.k)

    def _make_state_spec(self) -> dict:
        return {"counts": self._int_spec(4), "history": self._int_spec(self.k, dtype=torch.uint8), "card": self._int_spec(1), "dealt": self._int_spec(1)}

    def _action_n(self) -> int:
        return 4

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        card, counts = self._deal(self._full_deck(k), rows)
        history = torch.zeros((k, self.k), dtype=torch.uint8, device=self.device)
        history[:, :1] = card
        return {"counts": counts, "history": history, "card": card, "dealt": self._zeros(k) + 1}

    def _observe(self, state: dict) -> torch.Tensor:
        return one_hot(state["card"], 4)

    def _transition(self, state: dict, action: torch.Tensor):
        dealt, history = state["dealt"], state["history"]
        slot = dealt % self.k  # the card dealt k steps ago sits where the new one goes
        target = history.gather(1, slot).long()
        a = action.reshape(dealt.shape)
        reward = torch.where(dealt >= self.k, torch.where(a == target, self.reward_scale, -self.reward_scale), 0.0)
        terminated = dealt == self.num_cards - 1
        card, counts = self._deal(state["counts"], None)
        history = history.scatter(1, slot, card.to(torch.uint8))
        state = {"counts": counts, "history": history, "card": card, "dealt": dealt + 1}
        return state, reward, terminated, torch.zeros_like(terminated)


class RepeatFirst(CardEnv):
    """Answer the suit of the first card of the episode (popgym ``RepeatFirst``).

    Reward +-1 / (cards - 1) on every step; ``cards - 1`` steps, ending terminated.
    """

    obs_dim = 4

    def __init__(self, num_decks: int = 1, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        super().__init__(num_decks, num_envs, device, seed)
        self.max_episode_steps = self.num_cards - 1
        self.reward_scale = 1 / (self.num_cards - 1)

    def _make_state_spec(self) -> dict:
        return {"counts": self._int_spec(4), "first": self._int_spec(1), "card": self._int_spec(1), "dealt": self._int_spec(1)}

    def _action_n(self) -> int:
        return 4

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        card, counts = self._deal(self._full_deck(k), rows)
        return {"counts": counts, "first": card, "card": card.clone(), "dealt": self._zeros(k) + 1}

    def _observe(self, state: dict) -> torch.Tensor:
        return one_hot(state["card"], 4)

    def _transition(self, state: dict, action: torch.Tensor):
        dealt, first = state["dealt"], state["first"]
        reward = torch.where(action.reshape(first.shape) == first, self.reward_scale, -self.reward_scale)
        terminated = dealt == self.num_cards - 1
        card, counts = self._deal(state["counts"], None)
        state = {"counts": counts, "first": first, "card": card, "dealt": dealt + 1}
        return state, reward, terminated, torch.zeros_like(terminated)


class CountRecall(CardEnv):
    """Each step shows a dealt card and a query card (from a second deck); answer how many cards
    of the previous query's kind have been dealt so far (popgym ``CountRecall``).

    Observation: one-hot dealt kind ++ one-hot query kind. Actions: counts 0 .. cards / kinds.
    Reward +-1 / (cards - 1); ``cards - 1`` steps, ending terminated when both decks are dealt.
    """

    def __init__(self, num_decks: int = 1, deck_type: str = "colors", num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if deck_type not in KINDS:
            raise ValueError(f"deck_type must be one of {sorted(KINDS)}, got {deck_type!r}")
        self.kind = deck_type
        self.obs_dim = 2 * KINDS[deck_type]
        super().__init__(num_decks, num_envs, device, seed)
        self.max_episode_steps = self.num_cards - 1
        self.reward_scale = 1 / (self.num_cards - 1)

    def _make_state_spec(self) -> dict:
        k = KINDS[self.kind]
        return {"value_counts": self._int_spec(k), "query_counts": self._int_spec(k), "value": self._int_spec(1), "query": self._int_spec(1)}

    def _action_n(self) -> int:
        return self.num_cards // KINDS[self.kind] + 1

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        value, value_counts = self._deal(self._full_deck(k), rows)
        query, query_counts = self._deal(self._full_deck(k), rows)
        return {"value_counts": value_counts, "query_counts": query_counts, "value": value, "query": query}

    def _observe(self, state: dict) -> torch.Tensor:
        return torch.cat([one_hot(state["value"], self.num_kinds), one_hot(state["query"], self.num_kinds)], -1)

    def _transition(self, state: dict, action: torch.Tensor):
        value_counts = state["value_counts"]
        seen = self.per_kind - value_counts.gather(1, state["query"])  # cards of the query's kind dealt so far
        reward = torch.where(action.reshape(seen.shape) == seen, self.reward_scale, -self.reward_scale)
        value, value_counts = self._deal(value_counts, None)
        query, query_counts = self._deal(state["query_counts"], None)
        terminated = value_counts.sum(-1, keepdim=True) == 0
        state = {"value_counts": value_counts, "query_counts": query_counts, "value": value, "query": query}
        return state, reward, terminated, torch.zeros_like(terminated)


class Autoencode(CardEnv):
    """Watch the cards dealt, then recite their suits in reverse order (popgym ``Autoencode``).

    Observation: one-hot mode (0 play, 1 watch) ++ one-hot suit. The last card dealt comes with
    the mode already at play; during play the suit shown is 0. Reward 0 while watching,
    +-1 / cards per recited card; ``2 * cards - 1`` steps, ending terminated.
    State: ``"suits"`` (the suits dealt, in order, and a spare slot), ``"counts"``, ``"steps"``.
    """

    obs_dim = 6

    def __init__(self, num_decks: int = 1, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        super().__init__(num_decks, num_envs, device, seed)
        self.max_episode_steps = 2 * self.num_cards - 1
        self.reward_scale = 1 / self.num_cards

    def _make_state_spec(self) -> dict:
        # one slot past the deck: where a step that deals no card writes its (unused) draw
        return {"suits": self._int_spec(DECK_SIZE * self.num_decks + 1, dtype=torch.uint8), "counts": self._int_spec(4), "steps": self._int_spec(1)}

    def _action_n(self) -> int:
        return 4

    def _fresh_rows(self, rows):
        k = self._rows_count(rows)
        card, counts = self._deal(self._full_deck(k), rows)
        suits = torch.zeros((k, self.num_cards + 1), dtype=torch.uint8, device=self.device)
        suits[:, :1] = card
        return {"suits": suits, "counts": counts, "steps": self._zeros(k)}

    def _observe(self, state: dict) -> torch.Tensor:
        steps, last = state["steps"], self.num_cards - 1
        watching = steps < last
        suit = torch.where(steps <= last, state["suits"].gather(1, steps.clamp(max=last)).long(), 0)
        return torch.cat([one_hot(watching.long(), 2), one_hot(suit, 4)], -1)

    def _transition(self, state: dict, action: torch.Tensor):
        steps, suits, last = state["steps"], state["suits"], self.num_cards - 1
        watching = steps < last
        card, counts = self._deal(state["counts"], None)  # an empty deck (play) deals nothing: counts stay 0
        counts = torch.where(watching, counts, state["counts"])
        suits = suits.scatter(1, torch.where(watching, steps + 1, self.num_cards), card.to(torch.uint8))
        target = suits.gather(1, (2 * last - steps).clamp(0, last)).long()  # play step p recites card last - p
        reward = torch.where(watching, 0.0, torch.where(action.reshape(steps.shape) == target, self.reward_scale, -self.reward_scale))
        terminated = steps == 2 * last
        return {"suits": suits, "counts": counts, "steps": steps + 1}, reward, terminated, torch.zeros_like(terminated)


class HigherLower(CardEnv):
    """Guess whether the next card's rank is higher (action 0) or lower (1) than the one shown
    (popgym ``HigherLower``). Reward +-1 / cards, 0 on equal ranks; ``cards - 1`` steps, ending terminated."""

    kind = "ranks"
    obs_dim = 13

    def __init__(self, num_decks: int = 1, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        super().__init__(num_decks, num_envs, device, seed)
        self.max_episode_steps = self.num_cards - 1
        self.reward_scale = 1 / self.num_cards

    def _make_state_spec(self) -> dict:
        return {"counts": self._int_spec(13), "card": self._int_spec(1)}

    def _action_n(self) -> int:
        return 2

    def _fresh_rows(self, rows):
        card, counts = self._deal(self._full_deck(self._rows_count(rows)), rows)
        return {"counts": counts, "card": card}

    def _observe(self, state: dict) -> torch.Tensor:
        return one_hot(state["card"], 13)

    def _transition(self, state: dict, action: torch.Tensor):
        current = state["card"]
        terminated = state["counts"].sum(-1, keepdim=True) <= 1
        card, counts = self._deal(state["counts"], None)
        right = (card > current) == (action.reshape(current.shape) == 0)
        reward = torch.where(card == current, 0.0, torch.where(right, self.reward_scale, -self.reward_scale))
        return {"counts": counts, "card": card}, reward, terminated, torch.zeros_like(terminated)
