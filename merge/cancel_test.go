package merge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
)

// TestBuildOfMergedStopsWhenCancelled: decoding a merged.json looks at the
// load's context (issue 30: render of a 126 MB merged.json went on for
// 6.9 s after SIGINT). A merged.json of 20 MB that decodes is refused with
// the context's cause once it is cancelled; the deadline only catches a
// hang.
func TestBuildOfMergedStopsWhenCancelled(t *testing.T) {
	rep := &Report{Format: FormatVersion, Parts: []PartStatus{{Name: "p"}}, Verdict: VerdictPass}
	log := []byte(fmt.Sprintf(`{"serve":%q}`, bytes.Repeat([]byte("x"), 1000)))
	for i := range 20000 {
		rep.Cases = append(rep.Cases, Case{Name: fmt.Sprintf("c%d", i), OK: true, Checks: []collect.Check{{Name: "a", OK: true}}, Log: log, Part: "p"})
	}
	var data bytes.Buffer
	if err := rep.WriteJSON(&data, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := Build(&collect.Input{MergedPath: "merged.json", Merged: data.Bytes(), Context: context.Background()}, Options{}); err != nil || len(got.Cases) != len(rep.Cases) {
		t.Fatalf("not cancelled: %v", err)
	}
	stop := errors.New("interrupt")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	done := make(chan error, 1)
	go func() {
		_, err := Build(&collect.Input{MergedPath: "merged.json", Merged: data.Bytes(), Context: ctx}, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, stop) {
			t.Fatalf("cancelled: error %v, want the context's cause", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("decoding a merged.json went on a minute after its context was cancelled")
	}
}
