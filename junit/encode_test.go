package junit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestPartFilesAsWriteJSON: summary.json and part.json of imports of every
// fixture (with a metrics file, a deselected count, problems and suites)
// are the bytes collect.PartWriter.WriteJSON writes for what they hold.
func TestPartFilesAsWriteJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	metrics := filepath.Join("testdata", "metrics-parent.jsonl")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			im := &Import{Files: []string{file, file}}
			if strings.Contains(file, "xunit2-parent") {
				im.Files, im.Metrics = im.Files[:1], metrics
			}
			_, dir := importFiles(t, im)
			for _, c := range []struct {
				name string
				v    any
			}{{"summary.json", &collect.Summary{}}, {"part.json", &collect.PartMeta{}}} {
				got, err := os.ReadFile(filepath.Join(dir, c.name))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(got, c.v); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				want, err := json.MarshalIndent(c.v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if want = append(want, '\n'); !bytes.Equal(got, want) {
					t.Errorf("%s is not as WriteJSON writes it:\n got %s\nwant %s", c.name, got, want)
				}
			}
		})
	}
}
