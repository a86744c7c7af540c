def patch(manager):
    if not is_integration_version_supported("vllm", VLLM_SUPPORTED_RANGE):
        return


def register(manager):
    manager.register_patches_with_versions(
        [
            (BlockPoolPatch(), VLLM_ALL_RANGE),
            (LegacyRunnerPatch(), ">=0.8.4,<0.29.0"),
            (RunnerV2Patch(), VLLM_MRV2_RANGE),
            (LayoutV2Patch(), VLLM_LAYOUT_RANGE),
            (WorkerPatch(), VLLM_COMPUTED_RANGE),
            (UndefinedPatch(), VLLM_ALL_RANGE),
            (NotAPatch(), VLLM_ALL_RANGE),
        ]
    )
