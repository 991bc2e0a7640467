"""Tensor-native versions of POPGym's envs (proroklab/popgym), batched on the policy's device.

``NATIVE_POPGYM`` maps popgym's name of an env and difficulty (``"RepeatPreviousEasy"``) to the
native class and popgym's parameters for it; ``make_native_popgym`` builds one. Each env gives
what the gymnasium path gives for popgym's env after ``EncodeObservation`` (one flat float32
``"observation"``, one-hot where popgym's space is Discrete / MultiDiscrete / a Tuple of them)
and takes the same actions, so a policy trained here can be evaluated on popgym's own env.
``tests/envs/popgym`` steps each family in lockstep with popgym.
"""
from __future__ import annotations

import torch

from ...config_validation import UserError
from .bandit import MultiarmedBandit
from .base import Draws, PopGymEnvBase
from .battleship import Battleship
from .cards import Autoencode, CountRecall, HigherLower, RepeatFirst, RepeatPrevious
from .cartpole import NoisyPositionOnlyCartPole, PositionOnlyCartPole
from .concentration import Concentration
from .minesweeper import MineSweeper

#: popgym's env name + difficulty -> (native class, popgym's parameters for it)
NATIVE_POPGYM: dict[str, tuple[type, dict]] = {
    "RepeatPreviousEasy": (RepeatPrevious, {"num_decks": 1, "k": 4}),
    "RepeatPreviousMedium": (RepeatPrevious, {"num_decks": 2, "k": 32}),
    "RepeatPreviousHard": (RepeatPrevious, {"num_decks": 3, "k": 64}),
    "RepeatFirstEasy": (RepeatFirst, {"num_decks": 1}),
    "RepeatFirstMedium": (RepeatFirst, {"num_decks": 8}),
    "RepeatFirstHard": (RepeatFirst, {"num_decks": 16}),
    "CountRecallEasy": (CountRecall, {"num_decks": 1, "deck_type": "colors"}),
    "CountRecallMedium": (CountRecall, {"num_decks": 2, "deck_type": "suits"}),
    "CountRecallHard": (CountRecall, {"num_decks": 4, "deck_type": "ranks"}),
    "AutoencodeEasy": (Autoencode, {"num_decks": 1}),
    "AutoencodeMedium": (Autoencode, {"num_decks": 2}),
    "AutoencodeHard": (Autoencode, {"num_decks": 3}),
    "HigherLowerEasy": (HigherLower, {"num_decks": 1}),
    "HigherLowerMedium": (HigherLower, {"num_decks": 2}),
    "HigherLowerHard": (HigherLower, {"num_decks": 3}),
    "PositionOnlyCartPoleEasy": (PositionOnlyCartPole, {"max_episode_length": 200}),
    "PositionOnlyCartPoleMedium": (PositionOnlyCartPole, {"max_episode_length": 400}),
    "PositionOnlyCartPoleHard": (PositionOnlyCartPole, {"max_episode_length": 600}),
    "NoisyPositionOnlyCartPoleEasy": (NoisyPositionOnlyCartPole, {"noise_sigma": 0.1}),
    "NoisyPositionOnlyCartPoleMedium": (NoisyPositionOnlyCartPole, {"noise_sigma": 0.2}),
    "NoisyPositionOnlyCartPoleHard": (NoisyPositionOnlyCartPole, {"noise_sigma": 0.3}),
    "MultiarmedBanditEasy": (MultiarmedBandit, {"num_bandits": 10, "episode_length": 200}),
    "MultiarmedBanditMedium": (MultiarmedBandit, {"num_bandits": 20, "episode_length": 400}),
    "MultiarmedBanditHard": (MultiarmedBandit, {"num_bandits": 30, "episode_length": 600}),
    "MineSweeperEasy": (MineSweeper, {"size": 4, "num_mines": 2}),
    "MineSweeperMedium": (MineSweeper, {"size": 6, "num_mines": 6}),
    "MineSweeperHard": (MineSweeper, {"size": 8, "num_mines": 10}),
    "BattleshipEasy": (Battleship, {"board_size": 8}),
    "BattleshipMedium": (Battleship, {"board_size": 10}),
    "BattleshipHard": (Battleship, {"board_size": 12}),
    "ConcentrationEasy": (Concentration, {"num_decks": 1, "deck_type": "colors"}),
    "ConcentrationMedium": (Concentration, {"num_decks": 2, "deck_type": "colors"}),
    "ConcentrationHard": (Concentration, {"num_decks": 1, "deck_type": "ranks"}),
}

#: the env ids with a native version, as ``--env native:<id>`` takes them
NATIVE_POPGYM_IDS: tuple[str, ...] = tuple(f"popgym-{name}-v0" for name in NATIVE_POPGYM)


def make_native_popgym(name: str, num_envs: int = 1, device: torch.device | str = "cpu", seed: int | None = None) -> PopGymEnvBase:
    """``num_envs`` copies of popgym's env ``name`` (``"RepeatPreviousEasy"`` or its id
    ``"popgym-RepeatPreviousEasy-v0"``), tensor-native, on ``device``."""
    key = name[len("popgym-"):-len("-v0")] if name.startswith("popgym-") and name.endswith("-v0") else name
    if key not in NATIVE_POPGYM:
        raise UserError(f"POPGym env {name!r} has no tensor-native version (accepted: {', '.join(NATIVE_POPGYM)}; "
                        f"any popgym id runs on popgym's own env as popgym-<Name>-v0)")
    cls, kwargs = NATIVE_POPGYM[key]
    return cls(**kwargs, num_envs=num_envs, device=device, seed=seed)


__all__ = [
    "Autoencode", "Battleship", "Concentration", "CountRecall", "Draws", "HigherLower", "MineSweeper", "MultiarmedBandit",
    "NATIVE_POPGYM", "NATIVE_POPGYM_IDS", "NoisyPositionOnlyCartPole", "PopGymEnvBase", "PositionOnlyCartPole",
    "RepeatFirst", "RepeatPrevious", "make_native_popgym",
]
