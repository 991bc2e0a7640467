import sys
from pathlib import Path

import pytest
import torch




@pytest.fixture(autouse=True)
def _seed_and_threads():
    torch.manual_seed(0)
    yield
