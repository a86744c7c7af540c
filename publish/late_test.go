package publish

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/internal/ghfake"
	"github.com/ovg-project/ci-report/internal/marker"
)

// The four posts of the late-write trials: two profiles of the default
// suite and the same two profiles of another suite (docs/render.md §13),
// four sections in one results issue.
var lateWriters = []string{"nightly", "weekly", suiteWriter, suiteWriter + "-nightly"}

// latePost is what a writer of the late-write trials publishes.
func latePost(writer string) Post {
	if writer != suiteWriter+"-nightly" {
		return trialPost(writer)
	}
	p := suitePost("PASS")
	p.Profile, p.SectionName = "nightly", suiteWriter+"-nightly"
	p.Comment = marker.Comment{Run: runID, Attempt: "1", Profile: "nightly", Suite: suiteWriter}.String() +
		"\n### Scheduler regression (pytest, nightly) · 2026-11-28 · PASS\n\nAll 6 cases passed.\n"
	p.Section = "## Scheduler regression (pytest, nightly)\n\nEvery night at 03:00 UTC: 6 test cases of vllm-rlt.\n"
	return p
}

// lateTrial is one schedule of the four writers posting into #7 at once,
// one body PATCH of one of them landing late.
type lateTrial struct {
	starts [4]time.Duration // when each writer of lateWriters starts
	late   string           // the writer whose first body PATCH is late
	delay  time.Duration    // how late
	// transit: the PATCH is in transit for delay before GitHub applies and
	// answers it; otherwise it is answered at once and applied delay later
	// (ghfake.LateWrite).
	transit bool
	// applyDelay is the posts' Publisher.ApplyDelay (0: the default).
	applyDelay time.Duration
	// readLag is how far the fake's reads of an issue lag behind its
	// writes (ghfake.Server.ReadLag; TestReadLag).
	readLag time.Duration
}

func (tr lateTrial) String() string {
	mode := "applied"
	if tr.transit {
		mode = "in-transit"
	}
	return fmt.Sprintf("%s-%s-%s-late-starts-%v", tr.late, mode, tr.delay, tr.starts)
}

// runLateTrial posts the four writers into #7 of one fake at once on a
// virtual clock, the fake's late writes falling due by the same clock; the
// outcome's body is the body once every late write has landed.
func runLateTrial(t *testing.T, tr lateTrial) trialOutcome {
	t.Helper()
	fake, srv, clock := trialFake(t)
	fake.ReadLag = tr.readLag
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bodyPath := fakeRepo + "/issues/7"
	switch {
	case tr.delay == 0:
		// No late write: the other faults of the trial only.
	case !tr.transit:
		fake.Late = []*ghfake.LateWrite{{Path: bodyPath, From: tr.late, Times: 1, Delay: tr.delay}}
	default:
		var once sync.Once
		fake.Hold = func(r *http.Request, applied bool) {
			if r.Method == "PATCH" && r.URL.Path == bodyPath && r.Header.Get(writerHeader) == tr.late && !applied {
				once.Do(func() { clock.Sleep(r.Context(), tr.delay) })
			}
		}
	}
	out := trialOutcome{errs: map[string]error{}, logs: map[string]string{}}
	var mu sync.Mutex
	for i, writer := range lateWriters {
		clock.spawn(tr.starts[i], func() {
			var log bytes.Buffer
			p := trialPublisher(t, srv.URL, writer, clock, &log)
			p.ApplyDelay = tr.applyDelay
			_, err := p.Publish(ctx, Target{Issue: 7}, latePost(writer))
			mu.Lock()
			out.errs[writer], out.logs[writer] = err, log.String()
			mu.Unlock()
		})
	}
	clock.run()
	out.requests = transcript(fake)
	fake.ApplyPending()
	fake.Mu.Lock()
	out.body = fake.Issues[7].Body
	fake.Mu.Unlock()
	return out
}

// lateLost names what the final body lacks of the four sections and the
// hand-written text, and every post that reported success although its
// section is missing; empty when nothing is wrong.
func lateLost(out trialOutcome) (lost []string, falseSuccess []string) {
	for _, w := range lateWriters {
		p := latePost(w)
		there := sectionPresent(out.body, p.SectionName, p.Section) &&
			strings.Count(out.body, "<!-- gpu-ci:"+p.SectionName+":start -->") == 1
		if !there {
			lost = append(lost, "the "+p.SectionName+" section")
			if out.errs[w] == nil {
				falseSuccess = append(falseSuccess, w)
			}
		}
	}
	if !strings.HasPrefix(out.body, ResultsIssueMarker+"\r\n"+strings.TrimRight(handText, "\r\n")) {
		lost = append(lost, "the hand-written text")
	}
	return lost, falseSuccess
}

// lateAcceptanceTrials: each of the four writers has its first body PATCH
// applied 8 s late, in five start schedules: together, 0.3 s apart, 1.2 s
// apart, 3 s apart, and in the reverse order.
func lateAcceptanceTrials(applyDelay time.Duration) []lateTrial {
	starts := [][4]time.Duration{
		{0, 0, 0, 0},
		{0, 300 * time.Millisecond, 600 * time.Millisecond, 900 * time.Millisecond},
		{0, 1200 * time.Millisecond, 2400 * time.Millisecond, 3600 * time.Millisecond},
		{0, 3 * time.Second, 6 * time.Second, 9 * time.Second},
		{900 * time.Millisecond, 600 * time.Millisecond, 300 * time.Millisecond, 0},
	}
	var trials []lateTrial
	for _, w := range lateWriters {
		for _, s := range starts {
			trials = append(trials, lateTrial{starts: s, late: w, delay: 8 * time.Second, applyDelay: applyDelay})
		}
	}
	return trials
}

// TestLateWriteAcceptance is issue 18's acceptance: two profiles and two
// suites post into one issue at once, one body PATCH applied 8 s late (it
// erases the sections the others wrote meanwhile when it lands, after
// their read-backs): every section and the hand-written text survive in 20
// of 20 schedules, every post succeeds, and a post succeeds only when its
// section is there once every late write has landed. Each schedule runs
// twice and must send the same requests both times.
func TestLateWriteAcceptance(t *testing.T) {
	trials := lateAcceptanceTrials(0)
	kept, repaired := 0, 0
	for _, tr := range trials {
		got := runLateTrial(t, tr)
		if again := runLateTrial(t, tr); again.requests != got.requests {
			t.Errorf("%s: two runs of the same schedule sent different requests", tr)
		}
		lost, falseSuccess := lateLost(got)
		failed := 0
		for _, err := range got.errs {
			if err != nil {
				failed++
			}
		}
		for _, log := range got.logs {
			if strings.Contains(log, "repaired after a late write") {
				repaired++
			}
		}
		if len(lost) == 0 && failed == 0 {
			kept++
			continue
		}
		t.Errorf("%s: lost %v; posts reporting success without their section: %v; errors: %v\nbody: %q\nlogs: %v",
			tr, lost, falseSuccess, got.errs, got.body, got.logs)
	}
	t.Logf("%d of %d schedules kept every section with every post succeeding; %d posts repaired their section after a late write",
		kept, len(trials), repaired)
	if repaired == 0 {
		t.Errorf("no post repaired its section: the late write erased nothing, so the trials test nothing")
	}
}

// TestLateWriteWithoutWindowLosesSections is the control: the same
// schedules with the last read disabled (ApplyDelay < 0, as before issue
// 18) lose sections, and posts report success without theirs. It shows
// that the trials can fail and that the last read is what keeps the
// sections.
func TestLateWriteWithoutWindowLosesSections(t *testing.T) {
	lostIn, falseSuccesses := 0, 0
	for _, tr := range lateAcceptanceTrials(-1) {
		lost, falseSuccess := lateLost(runLateTrial(t, tr))
		if len(lost) > 0 {
			lostIn++
		}
		falseSuccesses += len(falseSuccess)
	}
	t.Logf("without the last read: %d of 20 schedules lost a section; %d posts reported success without theirs", lostIn, falseSuccesses)
	if lostIn == 0 || falseSuccesses == 0 {
		t.Errorf("without the last read no section was lost: the trials cannot tell the repair from its absence")
	}
}

// TestLateWriteDelays covers apply delays from 0 to 10 s, the PATCH
// answered at once and applied late, or in transit that long, by the first
// and the last writer to start: every section survives and every post
// succeeds.
func TestLateWriteDelays(t *testing.T) {
	starts := [4]time.Duration{0, 300 * time.Millisecond, 600 * time.Millisecond, 900 * time.Millisecond}
	delays := []time.Duration{0, 500 * time.Millisecond, 1800 * time.Millisecond, 2500 * time.Millisecond,
		4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second}
	for _, transit := range []bool{false, true} {
		for _, late := range []string{lateWriters[0], lateWriters[3]} {
			for _, d := range delays {
				tr := lateTrial{starts: starts, late: late, delay: d, transit: transit}
				got := runLateTrial(t, tr)
				if lost, _ := lateLost(got); len(lost) > 0 || fmt.Sprint(got.errs) != fmt.Sprint(map[string]error{
					lateWriters[0]: nil, lateWriters[1]: nil, lateWriters[2]: nil, lateWriters[3]: nil}) {
					t.Errorf("%s: lost %v; errors %v\nbody: %q\nlogs: %v", tr, lost, got.errs, got.body, got.logs)
				}
			}
		}
	}
}
