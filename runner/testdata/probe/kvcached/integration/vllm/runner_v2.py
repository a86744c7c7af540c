class RunnerV2Patch(Base):
    patch_name = "model_runner_v2"


class LayoutV2Patch(Base):
    patch_name = "kv_layout_v2"
