def register(manager):
    manager.register_patches_with_versions(
        [
            (AllocatorPatch(), SGLANG_ALL_RANGE),
            (MLAPoolPatch(), SGLANG_ALL_RANGE),
        ]
    )
