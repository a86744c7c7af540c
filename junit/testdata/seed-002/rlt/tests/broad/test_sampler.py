import random
import pytest


@pytest.mark.parametrize("seed", range(300))
def test_greedy_is_deterministic(seed):
    rng = random.Random(seed)
    logits = [rng.random() for _ in range(32)]
    assert max(range(32), key=logits.__getitem__) == max(range(32), key=logits.__getitem__)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(246))
def test_sampling_distribution(seed):
    assert seed >= 0
