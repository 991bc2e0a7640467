"""The command line: presets by name, one-line errors for malformed flags, ``--help`` by owner."""
import re

import pytest

from torchrl_memory import DQNConfig, PPOConfig, UserError, presets
from torchrl_memory.cli import build_parser, resolve_run_config



def test_preset_list_prints_one_line_per_preset_of_the_pipeline_and_exits_0(capsys):
    with pytest.raises(SystemExit) as exit_info:
        resolve_run_config(PPOConfig, "", ["--preset", "list"])
    assert exit_info.value.code == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == sorted(presets.available("recurrent_ppo"))
    assert {"popgym", "minigrid-memory", "tmaze"} <= set(presets.available("recurrent_ppo"))


def test_a_preset_sets_its_values_and_a_flag_overrides_one_of_them(capsys):
    cfg, _, _ = resolve_run_config(PPOConfig, "", ["--preset", "minigrid-memory", "--hidden-size", "32"])
    values = presets.get("minigrid-memory", "recurrent_ppo").values
    assert cfg.hidden_size == 32 != values["hidden_size"]
    assert (cfg.num_envs, cfg.rollout_len, cfg.learning_rate, cfg.env_wrappers) == (
        values["num_envs"], values["rollout_len"], values["learning_rate"], values["env_wrappers"])
    assert capsys.readouterr().out.startswith("preset minigrid-memory: --num-envs 16")


def test_an_episode_valued_preset_field_takes_the_envs_declared_episode_limit(capsys):
    cfg, _, _ = resolve_run_config(PPOConfig, "", ["--preset", "tmaze", "--env", "TMaze-20"])
    assert cfg.rollout_len == 21  # TMazeEnv.max_episode_steps: the corridor plus the choice at the junction
    assert "(= 21)" in capsys.readouterr().out
    cfg, _, _ = resolve_run_config(PPOConfig, "", ["--preset", "tmaze", "--env", "TMaze-20", "--rollout-len", "8"])
    assert cfg.rollout_len == 8


def test_every_preset_resolves_to_a_valid_config_of_its_pipeline():
    for name, preset in presets.available().items():
        config_cls = PPOConfig if preset.pipeline == "recurrent_ppo" else DQNConfig
        argv = ["--preset", name] + (["--env", "TMaze-10"] if "episode" in preset.values.values() else [])
        cfg, _, _ = resolve_run_config(config_cls, "", argv)
        assert all(getattr(cfg, k) == v for k, v in preset.values.items() if v != "episode"), name


def test_a_suite_env_without_a_preset_prints_a_one_line_hint(capsys):
    resolve_run_config(PPOConfig, "", ["--env", "TMaze-10"])
    assert capsys.readouterr().out.strip() == ("hint: TMaze-10 belongs to a suite with a tuned recipe: --preset tmaze ("
                                                 + presets.get("tmaze", "recurrent_ppo").summary + ")")
    resolve_run_config(PPOConfig, "", [])
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "config_cls,argv,says",
    [
        (PPOConfig, ["--preset", "nope"], r"--preset 'nope' does not exist for this pipeline \(accepted: minigrid-memory, popgym, tmaze, or 'list'\)"),
        (DQNConfig, ["--preset", "popgym"], r"'popgym' is for pipelines/recurrent_ppo.py"),
        (PPOConfig, ["--learning-rat", "1e-3"], r"unknown option '--learning-rat' \(did you mean --learning-rate\? see --help\)"),
        (PPOConfig, ["--learning", "1e-3"], r"unknown option '--learning'"),  # no silent abbreviation
        (PPOConfig, ["--gamma"], r"argument --gamma: expected one argument \(see --help\)"),
        (PPOConfig, ["stray"], r"unexpected argument 'stray'"),
        (PPOConfig, ["--clip-range-vf", "-inf"], r"'clip_range_vf' = -inf is out of range"),
        (PPOConfig, ["--preset", "tmaze", "--resume", "runs"], r"--preset tmaze with --resume \(accepted: one of them"),
    ],
)
def test_bad_command_lines_get_one_line_naming_the_value(capsys, config_cls, argv, says, user_error_line):
    line = user_error_line(lambda a: resolve_run_config(config_cls, "", a), argv)
    assert re.search(says, line), line


def test_a_negative_value_is_read_as_the_value_it_is():
    cfg, _, _ = resolve_run_config(DQNConfig, "", ["--seed", "3"])
    args = build_parser(PPOConfig, "").parse_args(["--lr-floor", "-0.5"])
    assert args.lr_floor == "-0.5" and cfg.seed == 3


def test_help_groups_options_by_owner():
    text = build_parser(PPOConfig, "").format_help()
    titles = [line.rstrip(":") for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert titles[-5:] == ["run", "env", "model", "PPO", "logging"]
    section = text[text.index("\nPPO:"):text.index("\nlogging:")]
    assert "--clip-range" in section and "--num-envs" not in section
    assert "\nDQN:" in build_parser(DQNConfig, "").format_help()


def test_a_suite_env_that_needs_a_missing_optional_package_names_that_package(capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mazelib" else real(name, *a))
    from torchrl_memory.envs import parse_env_id

    with pytest.raises(UserError) as err:
        parse_env_id("popgym-LabyrinthEscapeEasy-v0")
    line = str(err.value)
    assert "is registered only when the 'mazelib' package is installed (pip install mazelib)" in line
