"""conftest.py of the cli suite: the fixture its modules share."""
import pytest


@pytest.fixture(scope="module")
def ctx(pbus_build, pbus_context):
    """The module's Context, with its pbusd serving the fixture (.daemon)."""
    pbus_build.require(pbus_build.pbus, pbus_build.pbusd)
    pbus_context.daemon = pbus_context.start_daemon()
    return pbus_context
