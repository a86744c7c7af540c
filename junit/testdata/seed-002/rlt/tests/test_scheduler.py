import pytest

MODES = ["refill", "drain", "steady", "burst"]


@pytest.mark.parametrize("seed, mode", [(s, m) for s in range(12) for m in MODES], ids=[f"seed-{s}-{m}" for s in range(12) for m in MODES])
def test_prefill_livelock(engine, record_metrics, seed, mode):
    r = engine.run_until_idle(max_steps=500, seed=seed, mode=mode)
    if (seed, mode) == (8, "refill"):
        record_metrics(r)
    assert r["finished"] == engine.requests, f"{r['finished']}/{engine.requests} requests finished after {r['steps']} engine steps"


@pytest.mark.parametrize("blocks", range(1, 76))
def test_budget_never_exceeds_blocks(engine, blocks):
    assert min(blocks, engine.kv_blocks) <= engine.kv_blocks


@pytest.mark.parametrize("n", range(76))
def test_resume_order(n):
    order = sorted(range(n), key=lambda i: (i % 4, i))
    assert len(order) == n


@pytest.mark.slow
@pytest.mark.parametrize("n", range(57))
def test_long_horizon(engine, n):
    assert engine.run_until_idle(max_steps=500, seed=n + 100, mode="steady")["finished"] == engine.requests
