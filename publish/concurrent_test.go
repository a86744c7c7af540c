package publish

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// vclock runs goroutines one at a time on one virtual clock. A goroutine
// holds the turn until it sleeps or returns; the turn then goes to the
// sleeper that wakes first (ties: the one that went to sleep first) and the
// clock jumps to its wake time. Concurrent posts therefore interleave only
// at their waits and at the fake's holds, in an order fixed by the lengths
// of those waits: a trial sends the same requests every time, with no real
// sleep.
type vclock struct {
	mu    sync.Mutex
	now   time.Time
	seq   int
	queue []*vwaiter
	wg    sync.WaitGroup
}

type vwaiter struct {
	at  time.Time
	seq int
	ch  chan struct{}
}

func (c *vclock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// enqueue adds a waiter for time at; c.mu is held.
func (c *vclock) enqueue(at time.Time) *vwaiter {
	c.seq++
	w := &vwaiter{at: at, seq: c.seq, ch: make(chan struct{})}
	c.queue = append(c.queue, w)
	return w
}

// handOff gives the turn to the waiter that wakes first; c.mu is held.
func (c *vclock) handOff() {
	if len(c.queue) == 0 {
		return
	}
	next := 0
	for i, w := range c.queue {
		if w.at.Before(c.queue[next].at) || (w.at.Equal(c.queue[next].at) && w.seq < c.queue[next].seq) {
			next = i
		}
	}
	w := c.queue[next]
	c.queue = append(c.queue[:next], c.queue[next+1:]...)
	if w.at.After(c.now) {
		c.now = w.at
	}
	close(w.ch)
}

// spawn registers fn to start after the given time on the clock; run starts
// the first.
func (c *vclock) spawn(after time.Duration, fn func()) {
	c.mu.Lock()
	w := c.enqueue(c.now.Add(after))
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		<-w.ch
		defer func() {
			c.mu.Lock()
			c.handOff()
			c.mu.Unlock()
		}()
		fn()
	}()
}

func (c *vclock) run() {
	c.mu.Lock()
	c.handOff()
	c.mu.Unlock()
	c.wg.Wait()
}

// Sleep is the Publisher's wait (and the fake's hold): it gives up the turn
// until the clock reaches now+d.
func (c *vclock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	w := c.enqueue(c.now.Add(d))
	c.handOff()
	c.mu.Unlock()
	<-w.ch
	return ctx.Err()
}

// tagTransport marks every request with the writer that sends it.
type tagTransport struct{ writer string }

func (t tagTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(writerHeader, t.writer)
	return http.DefaultTransport.RoundTrip(r)
}

// concurrentTrial is one schedule of two writers posting into issue #7 at
// once: the first body PATCH of one of them fails (and is retried) or is
// slow, and a maintainer may edit the hand-written text meanwhile. A writer
// is a profile of the default suite (testPost) or the suite of suitePost.
type concurrentTrial struct {
	writers     [2]string
	weeklyAfter time.Duration // the second writer starts this long after the first
	kind        string        // what happens to the first body PATCH of `on`
	on          string
	handEdit    bool // a maintainer edits the hand-written text at 0.5 s
}

func (tr concurrentTrial) String() string {
	s := fmt.Sprintf("%s-on-%s-%s-after-%s", tr.kind, tr.on, tr.writers[1], tr.weeklyAfter)
	if tr.handEdit {
		s += "-hand-edit"
	}
	return s
}

func concurrentTrials(writers [2]string) []concurrentTrial {
	var trials []concurrentTrial
	for _, kind := range []string{"5xx", "429", "secondary", "slow-answer-lost", "slow-apply"} {
		for _, on := range writers {
			for _, after := range []time.Duration{300 * time.Millisecond, 1200 * time.Millisecond} {
				trials = append(trials, concurrentTrial{writers: writers, weeklyAfter: after, kind: kind, on: on, handEdit: len(trials)%2 == 1})
			}
		}
	}
	return trials
}

// suiteWriter is the writer of suitePost in the concurrent trials.
const suiteWriter = "rlt-pytest"

// trialPost is what a writer of the concurrent trials publishes.
func trialPost(writer string) Post {
	if writer == suiteWriter {
		return suitePost("PASS")
	}
	return testPost(writer, "PASS")
}

const editedHand = "Edited by hand while the posts ran."

type trialOutcome struct {
	requests string
	body     string
	errs     map[string]error
	logs     map[string]string
}

// runConcurrentTrial posts the trial's two writers into #7 of one fake at
// once on a virtual clock.
func runConcurrentTrial(t *testing.T, tr concurrentTrial) trialOutcome {
	t.Helper()
	fake, srv, clock := trialFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	bodyPath := fakeRepo + "/issues/7"
	switch tr.kind {
	case "5xx":
		fake.Faults = []*fault{{Method: "PATCH", Path: bodyPath, From: tr.on, Status: 502, Times: 1, Body: `{"message":"Server Error"}`}}
	case "429":
		fake.Faults = []*fault{{Method: "PATCH", Path: bodyPath, From: tr.on, Status: 429, Times: 1,
			Header: map[string]string{"Retry-After": "3"}, Body: `{"message":"Too Many Requests"}`}}
	case "secondary":
		fake.Faults = []*fault{{Method: "PATCH", Path: bodyPath, From: tr.on, Status: 403, Times: 1,
			Header: map[string]string{"Retry-After": "7"}, Body: secondaryBody()}}
	case "slow-answer-lost":
		// The PATCH lands at once, but its answer comes 30 s later as a 504
		// from a proxy that gave up waiting.
		fake.Faults = []*fault{{Method: "PATCH", Path: bodyPath, From: tr.on, Status: 504, Times: 1, Landed: true}}
	}
	var (
		holdMu sync.Mutex
		held   = map[*http.Request]bool{}
		seen   bool
	)
	fake.Hold = func(r *http.Request, applied bool) {
		if r.Method != "PATCH" || r.URL.Path != bodyPath || r.Header.Get(writerHeader) != tr.on {
			return
		}
		holdMu.Lock()
		if !applied && !seen {
			seen, held[r] = true, true
		}
		first := held[r]
		holdMu.Unlock()
		switch {
		case first && !applied && tr.kind == "slow-apply":
			// In transit for 1.5 s before GitHub applies it: the other
			// writer reads and writes meanwhile.
			clock.Sleep(r.Context(), 1500*time.Millisecond)
		case first && applied && tr.kind == "slow-answer-lost":
			clock.Sleep(r.Context(), 30*time.Second)
		}
	}

	out := trialOutcome{errs: map[string]error{}, logs: map[string]string{}}
	var outMu sync.Mutex
	post := func(writer string) func() {
		return func() {
			var log bytes.Buffer
			p := trialPublisher(t, srv.URL, writer, clock, &log)
			_, err := p.Publish(ctx, Target{Issue: 7}, trialPost(writer))
			outMu.Lock()
			out.errs[writer], out.logs[writer] = err, log.String()
			outMu.Unlock()
		}
	}
	clock.spawn(0, post(tr.writers[0]))
	clock.spawn(tr.weeklyAfter, post(tr.writers[1]))
	if tr.handEdit {
		clock.spawn(500*time.Millisecond, func() {
			fake.Mu.Lock()
			defer fake.Mu.Unlock()
			is := fake.Issues[7]
			is.Body = strings.Replace(is.Body, "Written by hand, kept byte for byte.", editedHand, 1)
		})
	}
	clock.run()
	out.requests = transcript(fake)
	fake.Mu.Lock()
	out.body = fake.Issues[7].Body
	fake.Mu.Unlock()
	return out
}

// trialFake is the fake of the concurrent trials, holding the results
// issue #7, and their virtual clock, by which its late writes fall due.
func trialFake(t *testing.T) (*fakeGitHub, *httptest.Server, *vclock) {
	fake, srv := newFake(t, testToken)
	fake.Issues[7] = &fakeIssue{Title: "GPU CI results", Body: ResultsIssueMarker + "\r\n" + handText, Labels: []string{"gpu-ci"}}
	clock := &vclock{now: t0}
	fake.Now = clock.Now
	return fake, srv, clock
}

// trialPublisher is a writer's Publisher in the concurrent trials: its
// requests tagged with its name, its waits on the virtual clock.
func trialPublisher(t *testing.T, url, writer string, clock *vclock, log *bytes.Buffer) *Publisher {
	t.Helper()
	api, err := NewGitHubAPI(url, testToken, tagTransport{writer}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &Publisher{API: api, Repo: Repo{Owner: "kv", Name: "cache"}, Log: log,
		Now: clock.Now, Sleep: clock.Sleep, Jitter: func() float64 { return 0.5 }, SettleDelay: 2 * time.Second}
}

// keptAll says what of the two sections and the hand-written text the body
// lost; empty when it kept everything.
func keptAll(body string, tr concurrentTrial) string {
	var lost []string
	for _, writer := range tr.writers {
		p := trialPost(writer)
		if !sectionPresent(body, p.SectionName, p.Section) || strings.Count(body, "<!-- gpu-ci:"+p.SectionName+":start -->") != 1 {
			lost = append(lost, "the "+writer+" section")
		}
	}
	hand := "Written by hand, kept byte for byte."
	if tr.handEdit {
		hand = editedHand
	}
	if !strings.HasPrefix(body, ResultsIssueMarker+"\r\nResults of the GPU CI.\r\n\r\n"+hand) {
		lost = append(lost, "the hand-written text")
	}
	return strings.Join(lost, " and ")
}

// TestConcurrentPostsKeepBothSections: the nightly and weekly profiles post
// into one results issue at once, 20 schedules, each with one body PATCH
// retried after a 5xx, a 429 or a secondary limit, or slow (its answer lost
// after 30 s, or applied only 1.5 s after it was sent, while the other
// profile reads and writes the body). Every schedule must end with both
// sections, the hand-written text (edited meanwhile in half of them) and
// both posts reporting success. Each schedule runs twice and must send the
// same requests both times.
func TestConcurrentPostsKeepBothSections(t *testing.T) {
	testConcurrentWriters(t, [2]string{"nightly", "weekly"})
}

// TestConcurrentSuitesKeepBothSections: the same 20 schedules with the
// default suite's weekly post and another suite's weekly post (its own
// section, docs/render.md §13): neither erases the other's section.
func TestConcurrentSuitesKeepBothSections(t *testing.T) {
	testConcurrentWriters(t, [2]string{"weekly", suiteWriter})
}

func testConcurrentWriters(t *testing.T, writers [2]string) {
	trials := concurrentTrials(writers)
	kept, sections := 0, 0
	for _, tr := range trials {
		got := runConcurrentTrial(t, tr)
		again := runConcurrentTrial(t, tr)
		if got.requests != again.requests {
			t.Errorf("%s: two runs of the same schedule sent different requests:\n%s\n---\n%s", tr, got.requests, again.requests)
		}
		lost := keptAll(got.body, tr)
		if !strings.Contains(lost, "section") {
			sections++
		}
		a, b := writers[0], writers[1]
		if lost == "" && got.errs[a] == nil && got.errs[b] == nil {
			kept++
			continue
		}
		t.Errorf("%s: lost %s; %s: %v, %s: %v\nbody: %q\n%s log:\n%s%s log:\n%s",
			tr, lost, a, got.errs[a], b, got.errs[b], got.body, a, got.logs[a], b, got.logs[b])
	}
	t.Logf("%d of %d concurrent-post trials kept both sections (%d of %d also the hand-written text, both posts succeeding)",
		sections, len(trials), kept, len(trials))
}
