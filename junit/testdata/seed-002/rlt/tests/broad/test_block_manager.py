import pytest


@pytest.mark.parametrize("blocks", range(300))
def test_allocate_free_roundtrip(blocks):
    free = list(range(blocks))
    taken = [free.pop() for _ in range(blocks // 2)]
    assert len(free) + len(taken) == blocks


@pytest.mark.slow
@pytest.mark.parametrize("blocks", range(300))
def test_fragmentation_soak(blocks):
    assert blocks >= 0
