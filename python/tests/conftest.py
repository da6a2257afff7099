"""conftest.py: shared fixtures; the data directories of the source tree."""
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(SOURCE, "tests", "data")


@pytest.fixture
def rng():
    import numpy as np
    seed = int(os.environ.get("NZ_TEST_SEED", "12345"))
    return np.random.default_rng(seed)
