import pytest
import torch

from torchrl_memory.cli import run_main


@pytest.fixture(autouse=True)
def _seed_and_threads():
    torch.manual_seed(0)
    yield


@pytest.fixture
def user_error_line(capsys):
    """Runs ``main(argv)`` as the command line does and returns its one error line, asserting
    that a user error ends it with exactly one ``error: ...`` line on stderr and exit status 2."""
    def run(main, argv) -> str:
        capsys.readouterr()  # drop what earlier runs printed
        with pytest.raises(SystemExit) as exit_info:
            run_main(main, argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: "), err
        return err[0]

    return run
