package marker

import "testing"

// The default suite's lines are the ones every existing results issue
// holds: they must never change.
func TestDefaultSuiteLinesUnchanged(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Comment{Run: "12093847561", Attempt: "2", Profile: "weekly"}.String(), "<!-- ci-report:comment run=12093847561 attempt=2 profile=weekly -->"},
		{Comment{Run: "7", Profile: "nightly"}.String(), "<!-- ci-report:comment run=7 attempt=1 profile=nightly -->"},
		{SectionStart("weekly"), "<!-- gpu-ci:weekly:start -->"},
		{SectionEnd("weekly"), "<!-- gpu-ci:weekly:end -->"},
		{Digest(`{"v":1}`), `<!-- ci-report:digest {"v":1} -->`},
		{SectionName("", "weekly"), "weekly"},
		{ResultsIssue, "<!-- ci-report:results-issue -->"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestCommentRoundTrip(t *testing.T) {
	for _, c := range []Comment{
		{Run: "1", Attempt: "1", Profile: "weekly"},
		{Run: "99", Attempt: "3", Profile: "junit", Suite: "rlt-pytest"},
	} {
		got, ok := ParseComment("  " + c.String() + "\r")
		if !ok || got != c {
			t.Errorf("ParseComment(%q) = %+v, %v; want %+v", c.String(), got, ok, c)
		}
	}
	if got := (Comment{Run: "5", Attempt: "1", Profile: "weekly", Suite: "rlt"}).String(); got != "<!-- ci-report:comment run=5 attempt=1 profile=weekly suite=rlt -->" {
		t.Errorf("suite marker = %q", got)
	}
}

func TestParseCommentRefuses(t *testing.T) {
	for _, line := range []string{
		"<!-- ci-report:comment run=x attempt=1 profile=weekly -->",
		"<!-- ci-report:comment run=1 attempt=1 profile=Weekly -->",
		"<!-- ci-report:comment run=1 attempt=1 profile=weekly suite= -->",
		"<!-- ci-report:comment run=1 attempt=1 profile=weekly suite=A -->",
		"<!-- ci-report:comment run=1 attempt=1 profile=weekly suite=a extra -->",
		"text <!-- ci-report:comment run=1 attempt=1 profile=weekly -->",
	} {
		if c, ok := ParseComment(line); ok {
			t.Errorf("ParseComment(%q) = %+v, want no marker", line, c)
		}
	}
}

func TestFindCommentFirstLine(t *testing.T) {
	body := "x\n<!-- ci-report:comment run=2 attempt=1 profile=weekly suite=b -->\n<!-- ci-report:comment run=3 attempt=1 profile=weekly -->\n"
	c, ok := FindComment(body)
	if !ok || c != (Comment{Run: "2", Attempt: "1", Profile: "weekly", Suite: "b"}) {
		t.Errorf("FindComment = %+v, %v", c, ok)
	}
}

func TestSectionMarks(t *testing.T) {
	body := "a <!--gpu-ci:weekly:start--> b <!-- gpu-ci:rlt-weekly:end -->"
	got := SectionMarks(body)
	if len(got) != 2 || got[0].Name != "weekly" || !got[0].Start || got[1].Name != "rlt-weekly" || got[1].Start ||
		body[got[1].Begin:got[1].End] != "<!-- gpu-ci:rlt-weekly:end -->" {
		t.Errorf("SectionMarks = %+v", got)
	}
	if FirstSectionMark("no marker") != "" {
		t.Error("FirstSectionMark found one in text without markers")
	}
}

func TestNames(t *testing.T) {
	for s, want := range map[string]bool{"weekly": true, "rlt-pytest": true, "a_1": true, "": false, "-a": false, "A": false, "a.b": false, "a b": false} {
		if ValidName(s) != want {
			t.Errorf("ValidName(%q) = %v", s, !want)
		}
	}
	if got := SectionName("rlt", "weekly"); got != "rlt-weekly" {
		t.Errorf("SectionName = %q", got)
	}
}

func TestDigestOf(t *testing.T) {
	js, ok := DigestOf("c\n\n  " + Digest(`{"v":1}`) + "\r\n")
	if !ok || js != `{"v":1}` {
		t.Errorf("DigestOf = %q, %v", js, ok)
	}
	if _, ok := DigestOf("<!-- ci-report:digest -->"); ok {
		t.Error("DigestOf read a line that is too short")
	}
}
