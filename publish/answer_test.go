package publish

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// issue8 is another issue of the repository, as GitHub would send it.
const issue8 = `{"number":8,"title":"other","body":"someone else's","repository_url":"https://api.github.com/repos/kv/cache","locked":false}`

// TestBadAnswersNeverWritten (issue 30, item 1): an answer that is not what
// was asked is never taken for an empty description or an empty list. The
// read is retried, then post stops naming the request, and the write that
// would have depended on it is never sent: the description keeps its
// hand-written text, no second comment, no second issue. Before the
// checks, a 204 or a foreign object on the body read erased the
// description, and a 204 on the comment listing posted a second comment.
func TestBadAnswersNeverWritten(t *testing.T) {
	answers := []struct {
		name string
		f    fault
		want string // in the error
	}{
		{name: "204", f: fault{Status: 204}, want: "HTTP 204: the answer was empty"},
		{name: "empty 200", f: fault{Status: 200, Raw: []byte{}}, want: "HTTP 200: the answer was empty"},
		{name: "foreign object", f: fault{Status: 200, Body: `{"message":"ok"}`}, want: "HTTP 200: "},
		{name: "truncated", f: fault{Status: 200, Raw: []byte(`{"number":7,"title":"GPU CI results","body":"<!-- ci-report:results-issue -->`)},
			want: "HTTP 200: the answer could not be read: unexpected EOF"},
		{name: "cut off in transit", f: fault{Status: 200, Raw: []byte(`{"number":7,`), Header: map[string]string{"Content-Length": "400"}},
			want: "HTTP 200: the answer could not be read: unexpected EOF"},
	}
	reads := []struct {
		name, method, path string
		skip               int
		target             Target
		existing           bool // this run's comment is there already (a re-post)
		other              string
		// wantWrites are the writes that may come before the bad read.
		wantWrites []string
	}{
		// Open's read of the issue: nothing at all is written.
		{name: "issue at open", path: fakeRepo + "/issues/7", target: Target{Issue: 7}, other: issue8},
		// The read just before the body PATCH: the comment is posted, the
		// body never written.
		{name: "body before the write", path: fakeRepo + "/issues/7", skip: 1, target: Target{Issue: 7}, other: issue8,
			wantWrites: []string{"POST " + fakeRepo + "/issues/7/comments"}},
		// The comment listing of a re-post: no second comment.
		{name: "comment listing", path: fakeRepo + "/issues/7/comments", target: Target{Issue: 7}, existing: true,
			other: `[{"id":5,"body":"x","issue_url":"https://api.github.com/repos/kv/cache/issues/8","user":{"login":"github-actions[bot]"}}]`},
		// The label listing: no second results issue.
		{name: "label listing", path: fakeRepo + "/issues", target: Target{Label: "gpu-ci", Create: true},
			other: `[{"number":3,"title":"x","body":"` + strings.ReplaceAll(ResultsIssueMarker, `"`, `\"`) + `","repository_url":"https://api.github.com/repos/other/repo"}]`},
		// The identity: an empty login would match no comment of ours.
		{name: "identity", path: "/user", target: Target{Issue: 7}, existing: true, other: `{"id":1,"type":"User"}`},
	}
	for _, rd := range reads {
		for _, a := range append(answers, struct {
			name string
			f    fault
			want string
		}{name: "another object", f: fault{Status: 200, Raw: []byte(rd.other)}, want: "HTTP 200: "}) {
			t.Run(rd.name+"/"+a.name, func(t *testing.T) {
				h := newHarness(t)
				h.fake.Login = "github-actions[bot]"
				h.resultsIssue()
				if rd.existing {
					h.fake.Comments = append(h.fake.Comments, &fakeComment{ID: 900, Issue: 7, Author: "github-actions[bot]",
						Body: CommentMarker(runID, "1", "nightly") + "\nthe first post"})
				}
				before := h.fake.Issues[7].Body
				ft := a.f
				ft.Method, ft.Path, ft.Skip, ft.Times = "GET", rd.path, rd.skip, 99
				h.fake.Faults = []*fault{&ft}
				_, err := h.pub.Publish(context.Background(), rd.target, testPost("nightly", "PASS"))
				if err == nil {
					t.Fatalf("Publish succeeded on a bad answer\n%s", transcript(h.fake))
				}
				if errors.Is(err, ErrInput) {
					t.Errorf("error %v is an input error (exit 2), want a GitHub one (exit 3)", err)
				}
				if msg := err.Error(); !strings.Contains(msg, "GET "+rd.path+": "+a.want) || !strings.Contains(msg, "4 times") {
					t.Errorf("error %q: want it to name GET %s and %q, after 4 tries", msg, rd.path, a.want)
				}
				var writes []string
				for _, r := range h.fake.Requests() {
					if r.Method != "GET" {
						writes = append(writes, r.Method+" "+r.Path)
					}
				}
				if strings.Join(writes, "\n") != strings.Join(rd.wantWrites, "\n") {
					t.Errorf("writes %q, want %q", writes, rd.wantWrites)
				}
				if got := h.fake.Issues[7].Body; got != before {
					t.Errorf("the description changed:\n%q\nwas\n%q", got, before)
				}
				if n := len(h.fake.IssueNumbers()); n != 1 {
					t.Errorf("%d issues, want 1", n)
				}
			})
		}
	}
}

// TestCreateAnsweredWithNothing: a comment POST answered 201 with an empty
// object (nothing named created) is retried as a create whose answer was
// lost: the retry finds the comment that landed and edits it, never posts
// a second.
func TestCreateAnsweredWithNothing(t *testing.T) {
	h := newHarness(t)
	h.fake.Login = "github-actions[bot]"
	h.resultsIssue()
	h.pub.ApplyDelay = -1
	h.fake.Faults = []*fault{{Method: "POST", Path: fakeRepo + "/issues/7/comments", Status: 201, Raw: []byte(`{}`), Landed: true, Times: 1}}
	res, err := h.pub.Publish(context.Background(), Target{Issue: 7}, testPost("nightly", "PASS"))
	if err != nil {
		t.Fatalf("Publish: %v\n%s", err, h.log.String())
	}
	if len(h.fake.Comments) != 1 || res.CommentID != h.fake.Comments[0].ID {
		t.Fatalf("comments %d, result %+v, want the one that landed", len(h.fake.Comments), res)
	}
	if !strings.Contains(h.log.String(), "the failed POST had landed") {
		t.Errorf("log does not say the POST had landed:\n%s", h.log.String())
	}
}

// TestDecodeIssue: the checks of an issue answer, field by field.
func TestDecodeIssue(t *testing.T) {
	repo := Repo{"kv", "cache"}
	tests := []struct {
		name, raw, want, elsewhere string
	}{
		{name: "the issue", raw: `{"number":7,"body":"b","repository_url":"https://api.github.com/repos/kv/cache"}`},
		{name: "no description", raw: `{"number":7,"body":null,"repository_url":"https://api.github.com/repos/KV/Cache"}`},
		{name: "enterprise", raw: `{"number":7,"body":"","repository_url":"https://ghe.example/api/v3/repos/kv/cache"}`},
		{name: "empty", raw: ``, want: "the answer was empty"},
		{name: "null", raw: `null`, want: "not a JSON object"},
		{name: "list", raw: `[]`, want: "not a JSON object"},
		{name: "message", raw: `{"message":"ok"}`, want: "no issue number"},
		{name: "no body", raw: `{"number":7,"repository_url":"https://api.github.com/repos/kv/cache"}`, want: "no body field"},
		{name: "body not a string", raw: `{"number":7,"body":{},"repository_url":"https://api.github.com/repos/kv/cache"}`, want: "not a string"},
		{name: "no repository", raw: `{"number":7,"body":"b"}`, want: "names no repository"},
		{name: "other number", raw: issue8, want: "the answer is kv/cache#8, not kv/cache#7", elsewhere: "kv/cache#8"},
		{name: "other repository", raw: `{"number":7,"body":"b","repository_url":"https://api.github.com/repos/kv/new"}`,
			want: "the answer is kv/new#7", elsewhere: "kv/new#7"},
		{name: "truncated", raw: `{"number":7,"body":"b`, want: "not the JSON expected"},
		{name: "bad time", raw: `{"number":7,"body":"b","repository_url":"https://api.github.com/repos/kv/cache","updated_at":"soon"}`, want: "updated_at"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			is, elsewhere, err := decodeIssue([]byte(tc.raw), repo, 7)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && is.Number != 7:
				t.Fatalf("issue %+v", is)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if elsewhere != tc.elsewhere {
				t.Errorf("elsewhere %q, want %q", elsewhere, tc.elsewhere)
			}
		})
	}
}

// FuzzAnswerChecks: no answer makes a check panic, and an answer a check
// accepts is what was asked. Its seeds (testdata/fuzz/FuzzAnswerChecks)
// are the answers of the tests above: GitHub's own shapes, a foreign
// object, another issue, a truncated body, empty ones.
func FuzzAnswerChecks(f *testing.F) {
	repo := Repo{"kv", "cache"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if is, _, err := decodeIssue(raw, repo, 7); err == nil && is.Number != 7 {
			t.Errorf("decodeIssue accepted #%d for #7", is.Number)
		}
		if is, err := decodeIssues(raw, repo); err == nil {
			for _, i := range is {
				if i.Number <= 0 {
					t.Errorf("decodeIssues accepted issue %d", i.Number)
				}
			}
		}
		if cs, err := decodeComments(raw, repo, 7); err == nil {
			for _, c := range cs {
				if c.ID <= 0 {
					t.Errorf("decodeComments accepted comment %d", c.ID)
				}
			}
		}
		if login, err := decodeUser(raw); err == nil && strings.TrimSpace(login) == "" {
			t.Error("decodeUser accepted an empty login")
		}
		if sha, err := decodePullHead(raw, 7); err == nil && !shaRE.MatchString(sha) {
			t.Errorf("decodePullHead accepted head %q", sha)
		}
		if rs, err := decodeCheckRuns(raw); err == nil {
			for _, r := range rs {
				if r.ID <= 0 {
					t.Errorf("decodeCheckRuns accepted check run %d", r.ID)
				}
			}
		}
	})
}
