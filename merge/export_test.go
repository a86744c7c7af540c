package merge

import (
	"context"
	"fmt"
	"os"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/benchtree"
)

// Exported to the external benchmark of merge + render (render imports merge,
// so a benchmark that calls both lives in package merge_test).
type (
	BenchTree   = benchTree
	HostileTree = hostileTree
)

var (
	WriteBenchTree   = writeBenchTree
	WriteHostileTree = writeHostileTree
	ProcessCPUTime   = benchtree.CPUTime
	MaxRSS           = benchtree.MaxRSS
)

// Load reads paths from disk and builds their report, as the CLI does
// (collect.LoadInput, then Build): merge itself reads nothing.
func Load(paths []string, opts Options) (*Report, error) {
	in, err := collect.LoadInput(paths, collect.LoadOptions{})
	if err != nil {
		return nil, err
	}
	return Build(in, opts)
}

// ReadMerged reads back the merged.json at path.
func ReadMerged(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return DecodeMerged(context.Background(), path, data)
}
