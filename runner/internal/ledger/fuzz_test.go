package ledger

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzParseList: no kvctl output, however broken or hostile, panics the
// parser or produces a sample that does not encode; what parses keeps its
// segments' fields. Seeds: testdata/fuzz/FuzzParseList.
func FuzzParseList(f *testing.F) {
	f.Fuzz(func(t *testing.T, out []byte) {
		entries, err := ParseList(out)
		if err != nil {
			if entries != nil {
				t.Fatalf("entries %v with error %v", entries, err)
			}
			return
		}
		ipcs := make([]string, 0, len(entries))
		for _, e := range entries {
			if e.GPU < 0 {
				t.Fatalf("negative GPU %d", e.GPU)
			}
			ipcs = append(ipcs, e.IPC)
		}
		s := Stats(entries, ipcs, time.Unix(0, 0))
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("sample does not encode: %v", err)
		}
	})
}
