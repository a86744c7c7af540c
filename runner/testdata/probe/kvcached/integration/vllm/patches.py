# Range constants and patch classes, as the probe finds them.
VLLM_ALL_RANGE = ">=0.8.4"  # a trailing comment
VLLM_MRV2_RANGE = ">=0.29.0,<0.30.0"
VLLM_SUPPORTED_RANGE: str = ">=0.17,<0.31"  # annotated
VLLM_LAYOUT_RANGE = VLLM_MRV2_RANGE  # an alias
VLLM_COMPUTED_RANGE = ",".join([">=0.9"])


class BlockPoolPatch(Base):
    """A patch with a docstring."""

    library = "vllm"
    patch_name = "elastic_block_pool"


class NotAPatch:
    name = "ignored"


class LegacyRunnerPatch(Base):
    patch_name = 'gpu_model_runner'


class WorkerPatch(Base):
    patch_name = "gpu_worker"
