# pytest sample for junit/producers_test.go (TestProducers): every outcome pytest writes to --junitxml.
import os, pytest

def test_pass():
    assert 1 + 1 == 2

def test_fail():
    assert 1 + 1 == 3, "arithmetic is broken"

@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n != 3

@pytest.mark.xfail(reason="known bug 12")
def test_xfail():
    assert False

@pytest.mark.xfail(reason="fixed upstream")
def test_xpass():
    assert True

@pytest.mark.skip(reason="needs a GPU")
def test_skip():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("fixture could not start")

def test_fixture_error(broken):
    pass

@pytest.fixture
def bad_teardown():
    yield 1
    raise RuntimeError("teardown failed")

def test_teardown_error(bad_teardown):
    assert bad_teardown == 1

def test_fails_then_teardown_error(bad_teardown):
    assert bad_teardown == 2

@pytest.mark.flaky(reruns=2)
def test_flaky():
    p = os.path.join(os.environ["FLAKY_DIR"], "count")
    n = int(open(p).read()) if os.path.exists(p) else 0
    open(p, "w").write(str(n + 1))
    assert n >= 1, "first attempt fails"

@pytest.mark.flaky(reruns=1)
def test_always_fails_rerun():
    assert False, "fails every time"

class TestGroup:
    def test_in_class(self):
        pass
