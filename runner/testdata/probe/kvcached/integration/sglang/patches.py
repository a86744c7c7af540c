SGLANG_ALL_RANGE = ">=0.4.9"


class AllocatorPatch(Base):
    patch_name = "elastic_allocator"


class MLAPoolPatch(Base):
    patch_name = "elastic_mla_memory_pool"
