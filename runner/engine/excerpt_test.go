package engine

import (
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ovg-project/ci-report/collect"
)

// TestScanLogExcerpt: the scan cuts the lines around the first error
// signature of a serve.log (docs/formats.md §4.9): five before it, forty in
// all, with the offset of the first one counted from where the case's
// output began; past forty, the first 25 and the log's last 15 lines.
func TestScanLogExcerpt(t *testing.T) {
	numbered := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "INFO line %d\n", i)
		}
		return b.String()
	}
	long := strings.Repeat("x", 100<<10) + "\n"
	tests := []struct {
		name     string
		log      string
		base     int64
		ok       bool
		from     string
		first    string
		n        int
		offset   int64
		lastLine string
		// The tail, when the log goes on past 40 lines from the first.
		skipped    int
		tailFirst  string
		tailOffset int64
	}{
		{name: "none", log: numbered(0, 100)},
		{name: "traceback in the middle", log: numbered(0, 20) + "Traceback (most recent call last):\n" + numbered(20, 100), base: 1000,
			ok: true, from: ErrorSignatures[0], first: "INFO line 15", n: 25, offset: 1000 + int64(len(numbered(0, 15))), lastLine: "INFO line 38",
			skipped: 46, tailFirst: "INFO line 85", tailOffset: 1000 + int64(len(numbered(0, 20))+len("Traceback (most recent call last):\n")+len(numbered(20, 85)))},
		{name: "forty lines exactly, no tail", log: numbered(0, 5) + "Traceback (most recent call last):\n" + numbered(5, 39),
			ok: true, from: ErrorSignatures[0], first: "INFO line 0", n: 40, lastLine: "INFO line 38"},
		{name: "a few lines past forty", log: numbered(0, 5) + "Traceback (most recent call last):\n" + numbered(5, 42),
			ok: true, from: ErrorSignatures[0], first: "INFO line 0", n: 25, lastLine: "INFO line 23",
			skipped: 3, tailFirst: "INFO line 27", tailOffset: int64(len(numbered(0, 5)) + len("Traceback (most recent call last):\n") + len(numbered(5, 27)))},
		{name: "near the start", log: "a\r\nRuntimeError: CUDA error: an illegal memory access was encountered\r\nb\r\n",
			ok: true, from: "CUDA kernel fault", first: "a", n: 3, lastLine: "b"},
		{name: "a failure signature outranks nothing, it is the first line", log: "x\nOSError: [Errno 98] error while attempting to bind on address ('127.0.0.1', 18001): address already in use\nTraceback (most recent call last):\n",
			ok: true, from: "port taken", first: "x", n: 3, lastLine: "Traceback (most recent call last):"},
		{name: "a long line counts once, cut", log: long + "Traceback (most recent call last):", ok: true, from: ErrorSignatures[0], n: 2, first: strings.Repeat("x", collect.ExcerptLineCut-1) + "…", lastLine: "Traceback (most recent call last):"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := ScanLog(iotest.HalfReader(strings.NewReader(tt.log)), tt.base)
			ex, ok := sc.Excerpt, sc.HasExcerpt
			if err != nil || ok != tt.ok {
				t.Fatalf("ok = %v, err %v; want ok %v", ok, err, tt.ok)
			}
			if !ok {
				return
			}
			if ex.From != tt.from || len(ex.Lines) != tt.n || ex.Lines[0] != tt.first || ex.Lines[len(ex.Lines)-1] != tt.lastLine || ex.Offset != tt.offset {
				t.Fatalf("got from %q, %d lines %q … %q at %d; want %q, %d lines %q … %q at %d",
					ex.From, len(ex.Lines), ex.Lines[0], ex.Lines[len(ex.Lines)-1], ex.Offset, tt.from, tt.n, tt.first, tt.lastLine, tt.offset)
			}
			wantTail := 0
			if tt.skipped > 0 {
				wantTail = collect.ExcerptTailLines
			}
			if ex.Skipped != tt.skipped || len(ex.Tail) != wantTail || ex.TailOffset != tt.tailOffset ||
				wantTail > 0 && (ex.Tail[0] != tt.tailFirst || ex.Tail[wantTail-1] != strings.TrimSuffix(tt.log[strings.LastIndex(strings.TrimSuffix(tt.log, "\n"), "\n")+1:], "\n")) {
				t.Fatalf("tail: %d skipped, %d lines %q at %d; want %d skipped, %d lines from %q (the log's last) at %d",
					ex.Skipped, len(ex.Tail), ex.Tail, ex.TailOffset, tt.skipped, wantTail, tt.tailFirst, tt.tailOffset)
			}
			if len(ex.Lines)+len(ex.Tail)+ex.Skipped > 0 && wantTail > 0 && tt.log[ex.TailOffset-tt.base:][:len(ex.Tail[0])] != ex.Tail[0] {
				t.Fatalf("tail_offset %d does not point at its first line", ex.TailOffset)
			}
			ex.File = "s/serve.log"
			if err := ex.Validate(); err != nil {
				t.Fatalf("the excerpt does not validate: %v", err)
			}
		})
	}
}

// TestBurstExcerpt takes the forty lines from a burst offset.
func TestBurstExcerpt(t *testing.T) {
	log := "before\n" + strings.Repeat("INFO request\n", 60)
	ex, ok, err := BurstExcerpt(strings.NewReader(log[7:]), 7)
	if err != nil || !ok {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if ex.From != collect.ExcerptBurst || ex.Offset != 7 || len(ex.Lines) != collect.ExcerptMaxLines || ex.Lines[0] != "INFO request" {
		t.Fatalf("got %+v", ex)
	}
	if _, ok, _ := BurstExcerpt(strings.NewReader(""), 7); ok {
		t.Fatal("an empty rest of the log gave an excerpt")
	}
}
