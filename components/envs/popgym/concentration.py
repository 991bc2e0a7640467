"""POPGym's Concentration, tensor-native: a shuffled deck face down, flip two cards a turn.

The observation shows every card's kind (colour or rank) where it is face up or was flipped
this turn, else "face down" (one more value), one-hot per card. A matching pair of two
different cards pays 2 / cards and stays face up; a pair that does not match pays
-2 / E; flipping a card already face up pays -1 / E per card in play and ends the turn.
E = ceil(2n - n / (2n - 1)) (n cards) truncates; all cards face up terminates.
"""
from __future__ import annotations

import math

import torch
from torchrl.data import Unbounded

from .base import PopGymEnvBase
from .cards import DECK_SIZE, KINDS


class Concentration(PopGymEnvBase):
    """popgym ``Concentration``. State: ``"board"`` (each position's kind), ``"face_up"``,
    ``"flipped"`` (the positions flipped this turn, ``cards`` for none), ``"elapsed"``."""

    def __init__(self, num_decks: int = 1, deck_type: str = "ranks", num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None):
        if deck_type not in ("colors", "ranks"):
            raise ValueError(f"deck_type must be 'colors' or 'ranks', got {deck_type!r}")
        self.num_cards = DECK_SIZE * int(num_decks)
        self.num_kinds = KINDS[deck_type]
        self.max_episode_steps = math.ceil(2 * self.num_cards - (self.num_cards / (2 * self.num_cards - 1)))
        self.success_reward = 1 / (self.num_cards // 2)
        self.failure_reward = -1 / self.max_episode_steps
        self.obs_dim = self.num_cards * (self.num_kinds + 1)
        super().__init__(num_envs=num_envs, device=device, seed=seed)
        card = torch.arange(self.num_cards, device=self.device)
        # the kind of popgym's card i: its colour i % 2 or its rank (i // 4) % 13
        self._kind_of_card = card % 2 if deck_type == "colors" else (card // 4) % 13

    def _make_state_spec(self) -> dict:
        n, c = self.batch_size, self.num_cards
        return {
            "board": Unbounded(shape=(*n, c), dtype=torch.uint8, device=self.device),
            "face_up": Unbounded(shape=(*n, c), dtype=torch.bool, device=self.device),
            "shown": Unbounded(shape=(*n, 2), dtype=torch.int64, device=self.device),
            "first": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
            "elapsed": Unbounded(shape=(*n, 1), dtype=torch.int64, device=self.device),
        }

    def _action_n(self) -> int:
        return self.num_cards

    def _fresh_rows(self, rows):
        k, none = self._rows_count(rows), self.num_cards
        board = self._kind_of_card[self.draws.permutation(k, self.num_cards, rows)].to(torch.uint8)
        return {
            "board": board,
            "face_up": torch.zeros((k, self.num_cards), dtype=torch.bool, device=self.device),
            "shown": torch.full((k, 2), none, dtype=torch.int64, device=self.device),
            "first": torch.full((k, 1), none, dtype=torch.int64, device=self.device),
            "elapsed": torch.zeros((k, 1), dtype=torch.int64, device=self.device),
        }

    def _observe(self, state: dict) -> torch.Tensor:
        n = state["board"].shape[0]
        flipped = torch.zeros((n, self.num_cards + 1), dtype=torch.bool, device=self.device).scatter(1, state["shown"], True)
        shown = state["face_up"] | flipped[:, : self.num_cards]
        values = torch.where(shown, state["board"].long(), self.num_kinds)
        return torch.nn.functional.one_hot(values, self.num_kinds + 1).to(torch.float32).reshape(n, -1)

    def _transition(self, state: dict, action: torch.Tensor):
        board, face_up, first, none = state["board"], state["face_up"], state["first"], self.num_cards
        a = action.reshape(-1, 1).long()
        open_turn = first != none  # this flip is a turn's second
        first_card = first.clamp(max=none - 1)
        # a turn's first card is never face up (flipping a face-up card ends the turn at once),
        # so popgym's "a card in play is already face up" is this card's
        already_up = face_up.gather(1, a)
        match = open_turn & ~already_up & (first != a) & (board.gather(1, first_card) == board.gather(1, a))
        f = self.failure_reward
        reward = torch.where(
            already_up, torch.where(open_turn, 2 * f, f),
            torch.where(open_turn, torch.where(match, self.success_reward, 2 * f), 0.0),
        )
        face_up = face_up | (torch.zeros_like(face_up).scatter(1, torch.cat([first_card, a], -1), True) & match)
        state = {
            "board": board,
            "face_up": face_up,
            "shown": torch.cat([first, a], -1),  # the cards in play this step, face up or not
            "first": torch.where(already_up | open_turn, none, a),  # the turn ends, or this card opens it
            "elapsed": state["elapsed"] + 1,
        }
        terminated = face_up.all(-1, keepdim=True)
        truncated = state["elapsed"] >= self.max_episode_steps
        return state, reward, terminated, truncated
