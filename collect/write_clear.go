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

// ClearResults removes the results of an earlier run from the part
// directory. A reused directory must not lend them to this run: a stale
// summary.json or cases.jsonl would be read as ours, and a stale error.txt
// (a part that could not start) would make the report say no GPU could be
// obtained although this run started.
func (w *PartWriter) ClearResults() error {
	for _, name := range earlierResults {
		if err := os.Remove(filepath.Join(w.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clear %s of an earlier run: %w", filepath.Join(w.Dir, name), err)
		}
	}
	return nil
}
