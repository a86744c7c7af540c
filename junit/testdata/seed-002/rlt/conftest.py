import json, os
import pytest
from engine import Engine

UNITS = {"finished": "requests", "steps": "steps", "preemptions": "", "resumptions": "", "kv_blocks_at_stop": "blocks"}


@pytest.fixture
def engine():
    return Engine()


@pytest.fixture
def record_metrics(request):
    """Writes the test's figures to $CI_METRICS, the sidecar `ci-report import junit --metrics` reads."""
    def record(figures):
        path = os.environ.get("CI_METRICS")
        if not path:
            return
        with open(path, "a") as f:
            for name, value in figures.items():
                f.write(json.dumps({"case": request.node.nodeid, "name": name, "value": value, "unit": UNITS[name]}) + "\n")
    return record


@pytest.fixture(scope="session", autouse=True)
def kv_geometry(record_testsuite_property):
    """The KV geometry of every test's engine, as suite properties of the JUnit report."""
    e = Engine()
    record_testsuite_property("kv_blocks", e.kv_blocks)
    record_testsuite_property("block_size", e.block_size)
