"""The native MineSweeper, Battleship and Concentration against popgym's."""
import numpy as np
import pytest

pytest.importorskip("popgym")

from popgym_lockstep import lockstep  # noqa: E402

from torchrl_memory.envs.popgym import make_native_popgym  # noqa: E402
from torchrl_memory.envs.popgym.battleship import SHIP_SIZES, ship_placements  # noqa: E402


# --- MineSweeper -------------------------------------------------------------------------
def mines_as_choices(real, log):
    return [("choice", int(c)) for kind, cells in log if kind == "choices" for c in cells]


def minesweeper_policy(row, real, rng):
    """Row 0, 3: random cells; 1: the clear cells in order (a win); 4: the first clear cell again
    and again (the time limit); 2, 5: a mine (a loss)."""
    grid = real.hidden_grid
    if row % 3 == 0:
        return rng.integers(grid.shape[0], size=2)
    if row % 3 == 2:
        return np.argwhere(grid == 1)[0]
    clear = np.argwhere(grid == 0)
    return np.argwhere(grid != 1)[0] if row == 4 or len(clear) == 0 else clear[0]


@pytest.mark.parametrize("name", ["MineSweeperEasy", "MineSweeperMedium", "MineSweeperHard"])
def test_minesweeper_steps_as_popgym(name):
    ends = lockstep(name, mines_as_choices, minesweeper_policy, num_envs=6, steps=150)
    assert ends[(1, True, False)] > 0 and ends[(2, True, False)] > 0 and ends[(1, False, True)] > 0, ends
    assert ends[("return", 1, 1.0)] > 0  # a win returns popgym's maximum


def test_mines_are_distributed_as_popgyms():
    """MineSweeperMedium: exactly 6 mines, every cell about equally likely, for both."""
    import gymnasium as gym

    real = gym.make("popgym-MineSweeperMedium-v0").unwrapped
    popgym_mines = np.array([(real.reset(seed=s), real.hidden_grid.reshape(-1) == 1)[1] for s in range(1500)])
    native = make_native_popgym("MineSweeperMedium", 3000, seed=0).reset()["mines"].numpy()
    for mines in (popgym_mines, native):
        assert (mines.sum(1) == 6).all()
        freq = mines.mean(0)
        assert np.abs(freq - 6 / 36).max() < 5 * np.sqrt((6 / 36) / len(mines)), freq


# --- Battleship --------------------------------------------------------------------------
def record_placements(real):
    """popgym's ``place_ship``, logging each ship's cells (its rejection draws are not the native env's)."""
    original = real.place_ship

    def place_ship(board, ship_size):
        before = board.copy()
        board = original(board, ship_size)
        real._placed.append((ship_size, (board != before).reshape(-1)))
        return board

    real._placed = []
    real.place_ship = place_ship


def placements_as_choices(real, log):
    placed, real._placed = real._placed, []
    out = []
    for size, cells in placed:
        options = ship_placements(real.board_size, size).numpy()
        out.append(("choice", int(np.flatnonzero((options == cells).all(1))[0])))
    return out


def battleship_policy(row, real, rng):
    """Row 0, 3: random cells; 1, 4: the ship cells not yet guessed (all sunk); 2, 5: cell (0, 0) over and over (the limit)."""
    if row % 3 == 0:
        return rng.integers(real.board_size, size=2)
    if row % 3 == 2:
        return np.array([0, 0])
    return np.argwhere((real.board == 1) & (real.guesses == 0))[0]


@pytest.mark.parametrize("name", ["BattleshipEasy", "BattleshipHard"])
def test_battleship_steps_as_popgym(name):
    limit = make_native_popgym(name).max_episode_steps
    ends = lockstep(name, placements_as_choices, battleship_policy, num_envs=6, steps=limit + 30, prepare=record_placements)
    assert ends[(1, True, False)] >= 2 and ends[(2, False, True)] == 2 and ends[("return", 1, 1.0)] >= 2, ends


def test_ships_are_placed_as_popgyms():
    """BattleshipEasy: 12 ship cells; how often each cell holds a ship matches popgym's board."""
    import gymnasium as gym

    real = gym.make("popgym-BattleshipEasy-v0").unwrapped
    popgym_boards = np.array([(real.reset(seed=s), real.board.reshape(-1).astype(bool))[1] for s in range(3000)])
    native = make_native_popgym("BattleshipEasy", 6000, seed=0).reset()["ships"].numpy()
    assert (native.sum(1) == sum(SHIP_SIZES)).all() and (popgym_boards.sum(1) == sum(SHIP_SIZES)).all()
    f_real, f_native = popgym_boards.mean(0), native.mean(0)
    assert f_native[0] < f_native[27] and f_real[0] < f_real[27]  # corners hold ships less often than the middle
    assert np.abs(f_real - f_native).max() < 5 * np.sqrt(0.25 / 3000 + 0.25 / 6000), np.abs(f_real - f_native).max()


# --- Concentration -----------------------------------------------------------------------
def shuffle_as_permutation(real, log):
    return [entry for entry in log if entry[0] == "permutation"]


def concentration_policy(row, real, rng):
    """Row 0, 3: random cards; 1, 4: a perfect player who sees the board (all pairs: terminated);
    2, 5: card 0 again and again (mismatches, then face-up flips, to the time limit)."""
    n = len(real.deck)
    if row % 3 == 0:
        return int(rng.integers(n))
    if row % 3 == 2:
        return 0
    up = set(real.deck["face_up_idx"])
    in_play = real.deck["in_play_idx"]
    if in_play:
        first = in_play[0]
        return next(p for p in range(n) if p != first and p not in up and real.state[p] == real.state[first])
    return next(p for p in range(n) if p not in up)


@pytest.mark.parametrize("name", ["ConcentrationEasy", "ConcentrationMedium", "ConcentrationHard"])
def test_concentration_steps_as_popgym(name):
    limit = make_native_popgym(name).max_episode_steps
    ends = lockstep(name, shuffle_as_permutation, concentration_policy, num_envs=6, steps=limit + 10)
    assert ends[(1, True, False)] >= 2 and ends[(2, False, True)] == 2 and ends[("return", 1, 1.0)] >= 2, ends


def test_concentration_boards_are_popgyms():
    """ConcentrationHard: each rank four times on the board, each position's rank uniform, for both."""
    import gymnasium as gym

    real = gym.make("popgym-ConcentrationHard-v0").unwrapped
    popgym_boards = np.array([(real.reset(seed=s), real.state.copy())[1] for s in range(1000)])
    native = make_native_popgym("ConcentrationHard", 2000, seed=0).reset()["board"].long().numpy()
    for boards in (popgym_boards, native):
        assert all((np.bincount(b, minlength=13) == 4).all() for b in boards[:50])
        freq = (boards == 0).mean(0)
        assert np.abs(freq - 1 / 13).max() < 5 * np.sqrt((1 / 13) / len(boards))
