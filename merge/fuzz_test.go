package merge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// fuzzParts builds up to four parts from data, drawing statuses, case names
// (from a small set, so that duplicates and -setup repeats happen), results,
// plans and setups from its bytes.
func fuzzParts(data []byte) []collect.Part {
	pos := 0
	next := func(n int) int {
		if pos >= len(data) {
			return 0
		}
		pos++
		return int(data[pos-1]) % n
	}
	partNames := []string{"vllm", "sglang", "all", "shard-1"}
	caseNames := []string{"vllm-setup", "sglang-setup", "a", "b", "c", "d", "e|x", "f\u00e9"}
	statuses := []collect.Status{collect.StatusComplete, collect.StatusPartial, collect.StatusMissing}
	var parts []collect.Part
	for i, n := 0, next(5); i < n; i++ {
		name := partNames[i]
		p := collect.Part{Dir: "/r/" + name, Name: name, Display: collect.DisplayName(name), Status: statuses[next(3)]}
		if p.Status != collect.StatusComplete {
			p.Reason = "fuzz"
		}
		if p.Status != collect.StatusMissing {
			p.HasSummary = next(2) == 0
			for k, nc := 0, next(6); k < nc; k++ {
				c := collect.CaseResult{Name: caseNames[next(len(caseNames))], OK: next(3) > 0}
				for j, nch := 0, next(3); j < nch; j++ {
					c.Checks = append(c.Checks, collect.Check{Name: fmt.Sprint("check", j), OK: next(4) > 0, Detail: "d"})
				}
				if next(2) == 0 {
					c.Log = []byte(`{"x": [1, "\u00e9"]}`)
				}
				p.Cases = append(p.Cases, c)
			}
		}
		if next(2) == 0 {
			for k, np := 0, next(5); k < np; k++ {
				p.Planned = append(p.Planned, caseNames[next(len(caseNames))])
			}
			p.Meta = &collect.PartMeta{Part: name, Profile: []string{"nightly", "weekly"}[next(2)], Planned: p.Planned}
		}
		if next(2) == 0 {
			s := &collect.Setup{Profile: []string{"nightly", "nightly", "weekly"}[next(3)]}
			if next(2) == 0 {
				sha := []string{"aaa", "bbb"}[next(2)]
				s.KvcachedSHA = &sha
			}
			s.GPUs = []collect.GPU{{Name: name}}
			var e collect.Engine
			e.Env.Set("K", name)
			s.Engines.Set([]string{"vllm", "sglang"}[next(2)], e)
			rev := name
			s.ModelRevisions.Set([]string{"m1", "m2"}[next(2)], &rev)
			s.Cases = []collect.CaseSetup{{Name: name + "-case"}}
			p.Setup = s
		}
		if next(4) == 0 {
			p.Problems = []collect.Problem{{File: "setup.json", Field: "gpus", What: "want array, got string"}}
		}
		parts = append(parts, p)
	}
	return parts
}

func FuzzMerge(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 0, 1, 3, 2, 1, 1, 1, 0, 0, 1, 1, 2, 1, 4, 1, 0, 0, 0})
	f.Add([]byte("\x03\x01\x00\x05\x02\x01\x02\x03\x01\x04\x00\x01\x05\x00\x02\x00\x03"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parts := fuzzParts(data)
		rep, err := Merge(parts, Options{})
		if err != nil {
			var me *MixError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a MixError", err)
			}
			if rep, err = Merge(parts, Options{AllowMixed: true}); err != nil {
				t.Fatalf("AllowMixed: %v", err)
			}
		}
		n := rep.Counts()
		if n.Failed > n.Total || n.NotRun > n.Total || n.Passed+n.Failed+n.NotRun < n.Total {
			t.Fatalf("counts %+v", n)
		}
		finished := 0
		allComplete := true
		for _, p := range parts {
			if p.Status != collect.StatusMissing {
				finished += len(p.Cases)
			}
			allComplete = allComplete && p.Status == collect.StatusComplete
		}
		if n.Ran != finished || len(rep.Cases) != finished+n.NotRun {
			t.Fatalf("%d cases (%d ran, %d not run) from %d finished", len(rep.Cases), n.Ran, n.NotRun, finished)
		}
		switch {
		case n.Ran == 0:
			if rep.Verdict != VerdictDidNotRun {
				t.Fatalf("verdict %q with no case run", rep.Verdict)
			}
		case n.Failed == 0 && n.NotRun == 0 && allComplete:
			if rep.Verdict != VerdictPass {
				t.Fatalf("verdict %q, want PASS", rep.Verdict)
			}
		default:
			want := fmt.Sprintf("FAIL (%d of %d cases", n.Failed, n.Total)
			if !strings.HasPrefix(rep.Verdict, want) || !strings.HasSuffix(rep.Verdict, ")") {
				t.Fatalf("verdict %q, want it to start %q", rep.Verdict, want)
			}
		}
		// merged.json reads back to the same bytes.
		var out bytes.Buffer
		if err := rep.WriteJSON(&out, nil); err != nil {
			t.Fatal(err)
		}
		dir, err := os.MkdirTemp("", "fuzzmerge")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "merged.json")
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := ReadMerged(path)
		if err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := back.WriteJSON(&again, nil); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), again.Bytes()) {
			t.Fatalf("merged.json does not read back the same:\n%s\n%s", out.Bytes(), again.Bytes())
		}
	})
}
