"""A stand-in for vllm-rlt's CPU scheduler harness (seed 002).

It replays the figures the seed recorded for its regression test on each
revision (REVISION=parent or fix): the parent livelocks in refill mode, the fix
finishes every request. Every other seed and mode finishes on both.
"""
import os

# The seed's figures: parent 88c8f96 and fix a378969 of the scheduler livelock fix.
LIVELOCK = {
    "parent": dict(finished=3, steps=500, preemptions=465, resumptions=463, kv_blocks_at_stop=40),
    "fix": dict(finished=10, steps=121, preemptions=4, resumptions=4, kv_blocks_at_stop=0),
}


class Engine:
    def __init__(self, requests=10, kv_blocks=40, block_size=16, dtype="float32"):
        self.requests, self.kv_blocks, self.block_size, self.dtype = requests, kv_blocks, block_size, dtype
        self.revision = os.environ.get("REVISION", "fix")

    def run_until_idle(self, max_steps, seed, mode):
        if seed == 8 and mode == "refill":
            r = dict(LIVELOCK[self.revision])
            r["steps"] = min(r["steps"], max_steps)
            return r
        steps = 40 + 7 * seed + (13 if mode == "refill" else 0)
        return dict(finished=self.requests, steps=steps, preemptions=seed % 3, resumptions=seed % 3, kv_blocks_at_stop=0)
