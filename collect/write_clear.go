package collect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// earlierResults are the files of a part that say what a run found, as
// opposed to what it was asked to do (part.json, setup.json, rewritten
// anyway).
var earlierResults = []string{"summary.json", "cases.jsonl", "summary.md", "error.txt"}

// ClearResults removes an earlier run's results from the part directory, so a
// reused directory cannot lend them to this run (a stale error.txt would say
// no GPU could be obtained).
func (w *PartWriter) ClearResults() error {
	for _, name := range earlierResults {
		if err := os.Remove(filepath.Join(w.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clear %s of an earlier run: %w", filepath.Join(w.Dir, name), err)
		}
	}
	return nil
}
