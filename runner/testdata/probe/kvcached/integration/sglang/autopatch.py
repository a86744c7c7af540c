def patch(manager):
    if not is_integration_version_supported("sglang", SGLANG_GUARD):
        return


def register(manager):
    manager.register_patches_with_versions(
        [
            (AllocatorPatch(), SGLANG_ALL_RANGE),
            (MLAPoolPatch(), SGLANG_ALL_RANGE),
        ]
    )
