package collect

import "testing"

func TestProblemError(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Field: "--date", What: `"28.11.2026": want YYYY-MM-DD`}, `--date: "28.11.2026": want YYYY-MM-DD`},
		{Problem{File: "ci-report.json", Field: "repository_url", What: "want a plain http(s) URL"}, "ci-report.json: repository_url: want a plain http(s) URL"},
		{Problem{What: "no input"}, "no input"},
	} {
		if got := tc.p.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q, want %q", tc.p, got, tc.want)
		}
	}
}
