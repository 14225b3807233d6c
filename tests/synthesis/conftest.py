import pytest

from synthesis.verify import Verify


@pytest.fixture(scope="module")
def stage():
    """A `verify` stage with a warm sandbox pool, shared by a test module."""
    verify = Verify("verify", timeout_s=1.0, memory_mb=128, workers=2)
    verify.setup()
    yield verify
    verify.teardown()
