package merge

// Exported to the external benchmark of merge + render (render imports merge,
// so a benchmark that calls both lives in package merge_test).
type (
	BenchTree   = benchTree
	HostileTree = hostileTree
)

var (
	WriteBenchTree   = writeBenchTree
	WriteHostileTree = writeHostileTree
	ProcessCPUTime   = processCPUTime
	MaxRSS           = maxRSS
)
