"""The README and docs/ stay true to the repository: every relative link and image exists (with
its heading, when it names one), every pipeline command they print parses with the current CLI,
and docs/api.md names every public name."""
from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

from torchrl_memory.cli import build_parser, config_from_args
from torchrl_memory.config_validation import UserError
from torchrl_memory.dqn import DQNConfig
from torchrl_memory.ppo import PPOConfig

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PIPELINES = {"pipelines/recurrent_ppo.py": PPOConfig, "pipelines/dqn.py": DQNConfig}
FACES = ["torchrl_memory", "torchrl_memory.envs", "torchrl_memory.ppo", "torchrl_memory.dqn", "torchrl_memory.runs", "torchrl_memory.serve"]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", flags=re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HTML_SRC = re.compile(r"<(?:img|a)\s[^>]*(?:src|href)=\"([^\"]+)\"")
SHELL_OPERATORS = {"&&", "||", "|", ";", ">", ">>", "2>&1", "&"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _prose(text: str) -> str:
    """The page without its code: links inside code blocks or spans are examples, not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """The anchor a code host gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", FENCE.sub("", page.read_text()), flags=re.M)
    return {_slug(h) for h in headings}


def _links() -> list[tuple[Path, str]]:
    out = []
    for page in PAGES:
        prose = _prose(page.read_text())
        for target in LINK.findall(prose) + HTML_SRC.findall(prose):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ... are not checked here
                out.append((page, target))
    return out


def _commands() -> list[tuple[Path, str]]:
    """Every ``python pipelines/<script>.py ...`` line in a code block or code span, continuations joined."""
    out = []
    for page in PAGES:
        text = page.read_text()
        snippets = [b.replace("\\\n", " ") for b in FENCE.findall(text)]
        snippets += [s.strip("`") for s in INLINE_CODE.findall(FENCE.sub("", text))]
        for snippet in snippets:
            for line in snippet.splitlines():
                if re.search(r"\bpython3? pipelines/(recurrent_ppo|dqn)\.py\b", line):
                    out.append((page, line.strip()))
    return out


def _pipeline_args(line: str) -> list[tuple[str, list[str]]]:
    """(script, arguments) for each pipeline call in a shell line; comments and what follows a shell operator are left out."""
    tokens = shlex.split(line, comments=True)
    calls = []
    for i, token in enumerate(tokens):
        if token in PIPELINES and i > 0 and re.fullmatch(r"python3?", tokens[i - 1]):
            args = []
            for arg in tokens[i + 1:]:
                if arg in SHELL_OPERATORS:
                    break
                args.append(arg)
            calls.append((token, args))
    return calls


def test_docs_pages_exist_and_the_readme_stays_a_front_page():
    assert len(PAGES) >= 10, [_rel(p) for p in PAGES]
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


@pytest.mark.parametrize("page,target", _links(), ids=lambda v: _rel(v) if isinstance(v, Path) else v)
def test_every_relative_link_and_image_exists(page: Path, target: str):
    path, _, anchor = target.partition("#")
    resolved = (page.parent / path).resolve() if path else page
    assert resolved.exists(), f"{_rel(page)} links to {target}, which does not exist"
    if anchor and resolved.suffix == ".md":
        assert anchor in _anchors(resolved), f"{_rel(page)} links to {target}: no heading {anchor!r} in {_rel(resolved)}"


def test_the_pages_embed_pictures_that_exist():
    images = [(page, t) for page, t in _links() if t.endswith(".png")]
    assert len(images) >= 10, images
    for page, target in images:
        assert (page.parent / target).resolve().is_relative_to(ROOT / "docs" / "img"), f"{_rel(page)}: {target} is not under docs/img"


@pytest.mark.parametrize("page,line", _commands(), ids=lambda v: _rel(v) if isinstance(v, Path) else v[:80])
def test_every_pipeline_command_parses_with_the_current_cli(page: Path, line: str):
    calls = _pipeline_args(line)
    assert calls, f"{_rel(page)}: no pipeline call read from {line!r}"
    for script, args in calls:
        config_cls = PIPELINES[script]
        parser = build_parser(config_cls, "")
        options = {s for action in parser._actions for s in action.option_strings}
        for arg in args:
            flag = arg.split("=", 1)[0]
            if flag.startswith("--"):  # a real option, not argparse's accepted abbreviation of one
                assert flag in options, f"{_rel(page)}: {script} has no option {flag} ({line!r})"
        args = [a for a in args if a not in ("--help", "-h")]
        try:
            parsed = parser.parse_args(args)
        except SystemExit as e:
            pytest.fail(f"{_rel(page)}: {script} refuses {args} (exit {e.code}): {line!r}")
        try:
            config_from_args(config_cls, parsed)  # every value reads as its field's type
        except (UserError, ValueError) as e:
            pytest.fail(f"{_rel(page)}: {script} {args}: {e}")


def test_the_command_reader_finds_continued_and_commented_commands():
    line = "python pipelines/dqn.py --env Acrobot-v1 --total-steps 100000   # a comment && not a command"
    assert _pipeline_args(line) == [("pipelines/dqn.py", ["--env", "Acrobot-v1", "--total-steps", "100000"])]
    chained = "pip install -e . && python pipelines/recurrent_ppo.py && echo done"
    assert _pipeline_args(chained) == [("pipelines/recurrent_ppo.py", [])]
    assert ("pipelines/recurrent_ppo.py" in {s for _, line in _commands() for s, _ in _pipeline_args(line)})


def test_api_page_names_every_public_name():
    api = (ROOT / "docs" / "api.md").read_text()
    missing = [f"{face}.{name}" for face in FACES for name in importlib.import_module(face).__all__ if f"`{name}`" not in api]
    assert not missing, f"docs/api.md does not name {missing}"
