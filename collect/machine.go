package collect

// Machine is what the host said about itself before and after a failed case
// (docs/formats.md §4.10): the runner's measurements, which decide a case's
// class when something went bad in between (WentBad), whatever its logs say.
type Machine struct {
	Before  *MachineState `json:"before,omitempty"`
	After   *MachineState `json:"after,omitempty"`
	WentBad string        `json:"went_bad,omitempty"`
	// WentBadBefore: WentBad held already when the case started.
	WentBadBefore bool `json:"went_bad_before,omitempty"`
	// Facts are the runner's other facts of the case as `KEY=VALUE`, the
	// form of `ci-report classify --fact` (docs/formats.md §4.10).
	Facts []string `json:"facts,omitempty"`
}

// MachineState is one look at the host: its GPUs as the GPU backend (NVML,
// or the simulated GPU) reports them, and the free space of its disks.
// Errors are what could not be asked.
type MachineState struct {
	GPUCount int         `json:"gpu_count"`
	Driver   string      `json:"driver,omitempty"`
	GPUs     []GPUState  `json:"gpus,omitempty"`
	Disks    []DiskState `json:"disks,omitempty"`
	Errors   []string    `json:"errors,omitempty"`
}

// GPUState is one of the run's GPUs: its health counters, or Error when it
// did not answer.
type GPUState struct {
	Index     int `json:"index"`
	GPUHealth `json:",inline"`
	Error     string `json:"error,omitempty"`
}

// GPUHealth is what a GPU says of its own health (docs/formats.md §4.10 says
// what each counter counts; runner/gpu.Health is this type): counters that
// only rise while the driver stays loaded; Xids only in nvml builds.
type GPUHealth struct {
	ECCUncorrected uint64 `json:"ecc_uncorrected"`
	RetiredPages   uint64 `json:"retired_pages"`
	RemappedRows   uint64 `json:"remapped_rows"`
	PCIeReplays    uint64 `json:"pcie_replays"`
	Xids           uint64 `json:"xids,omitempty"`
	LastXid        uint64 `json:"last_xid,omitempty"`
	// What NVML says needs a GPU reset (or is broken) before the GPU is used:
	// a page retirement or row remapping pending, a row remapping failed.
	RetirePending bool `json:"retired_pages_pending,omitempty"`
	RemapPending  bool `json:"remapped_rows_pending,omitempty"`
	RemapFailed   bool `json:"remap_failed,omitempty"`
}

// DiskState is the file system holding Path (its Role: "work dir", "model
// cache", "/dev/shm"), in MiB; ReadOnly when it is mounted read-only.
type DiskState struct {
	Role     string `json:"role"`
	Path     string `json:"path"`
	FreeMiB  int64  `json:"free_mib"`
	TotalMiB int64  `json:"total_mib"`
	ReadOnly bool   `json:"read_only,omitempty"`
}
