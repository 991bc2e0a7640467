"""One line and exit status 2, nothing written, where a traceback or a silently useless run used to be;
a range that comes from another field names that field."""
import re

import pytest

from torchrl_memory.pipelines import dqn, recurrent_ppo

PPO = ["--num-envs", "4", "--envs-per-minibatch", "2", "--eval-episodes", "2", "--plot", "false"]
DQN = ["--hidden-sizes", "16", "--batch-size", "8", "--min-replay-size", "32", "--eval-episodes", "2", "--plot", "false"]


@pytest.mark.parametrize(
    "main,argv,says",
    [
        (recurrent_ppo.main, ["--device", "cuda:abc"], r"'device' = 'cuda:abc' .*\(accepted: 'auto', 'cpu', 'cuda' or 'cuda:N'\)"),
        (dqn.main, ["--device", "cuda:abc"], r"'device' = 'cuda:abc'"),
        (recurrent_ppo.main, ["--seed", str(2**64)], r"'seed' = 18446744073709551616 .*\[0, 9223372036854775807\]"),
        (dqn.main, ["--seed", str(2**63)], r"'seed' = 9223372036854775808 .*\[0, 9223372036854775807\]"),
        (recurrent_ppo.main, ["--total-steps", "63"], r"'total_steps' = 63 .*an integer >= 64: at least num_envs \* rollout_len = 64"),
        (dqn.main, ["--total-steps", "31"], r"'total_steps' = 31 .*an integer >= 32: at least min_replay_size = 32"),
        (recurrent_ppo.main, ["--hidden-size", "10000000"], r"^error: out of (CPU|GPU) memory: .*\(accepted: sizes that fit"),
        (dqn.main, ["--hidden-sizes", "10000000,10000000"], r"^error: out of (CPU|GPU) memory: .*--hidden-sizes"),
    ],
)
def test_bad_values_are_one_line_with_exit_status_2(tmp_path, capsys, main, argv, says, user_error_line):
    line = user_error_line(main, [*(PPO if main is recurrent_ppo.main else DQN), *argv, "--run-root", str(tmp_path)])
    assert re.search(says, line), line
    assert not any(tmp_path.iterdir())  # nothing was written


@pytest.mark.parametrize(
    "main,argv,says",
    [
        (dqn.main, ["--collector-workers", "2"], r"'collector_workers' = 2 .*\(accepted: a divisor of num_envs=1\)"),
        (recurrent_ppo.main, ["--num-envs", "6", "--env-workers", "4"], r"'env_workers' = 4 .*\(accepted: a divisor of num_envs=6\)"),
        (recurrent_ppo.main, ["--num-envs", "8"], r"'envs_per_minibatch' = 16 .*an integer in \[1, 8\]: at most num_envs = 8"),
        (recurrent_ppo.main, ["--rollout-len", "16", "--chunk-len", "32"], r"'chunk_len' = 32 .*a divisor of rollout_len=16"),
        (dqn.main, ["--min-replay-size", "600", "--buffer-capacity", "500"], r"'min_replay_size' = 600 .*\[1, 500\]: at most buffer_capacity = 500"),
        (dqn.main, ["--batch-size", "64"], r"'batch_size' = 64 .*\[1, 32\]: at most min_replay_size = 32"),
    ],
)
def test_a_range_from_another_field_names_that_field(tmp_path, capsys, main, argv, says, user_error_line):
    base = ["--eval-episodes", "2"] if main is recurrent_ppo.main else DQN
    line = user_error_line(main, [*base, *argv, "--run-root", str(tmp_path)])
    assert re.search(says, line), line

