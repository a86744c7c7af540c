package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The checks of GitHub's answers that a write depends on (docs/publish.md §8):
// an answer that is not what was asked is never taken for an empty body or
// list, since the write it decides could erase a description or post a
// second comment. Each is a pure function of the answer's bytes.

// errEmptyAnswer is an answer without a body (a 204, or a 200 with none).
var errEmptyAnswer = errors.New("the answer was empty")

// decode unmarshals an answer, saying what it was for when it cannot. Its
// first byte must be want ('{' or '['), checked before it is decoded into a
// type that would take either for zero values.
func decode(raw []byte, want byte, v any) error {
	t := bytes.TrimLeft(raw, " \t\r\n")
	switch {
	case len(t) == 0:
		return errEmptyAnswer
	case t[0] != want:
		kind := map[byte]string{'{': "object", '[': "list"}[want]
		return fmt.Errorf("the answer is not a JSON %s (it starts %s)", kind, startOf(t))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("the answer is not the JSON expected: %v", err)
	}
	return nil
}

// startOf shows the first bytes of an answer in an error, quoted.
func startOf(b []byte) string {
	const n = 20
	if len(b) > n {
		return fmt.Sprintf("%q…", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// issueAnswer is what post reads of an issue. Body stays raw so that an
// absent field (not GitHub's issue) differs from null (an issue without a
// description).
type issueAnswer struct {
	Number        int             `json:"number"`
	Body          json.RawMessage `json:"body"`
	RepositoryURL string          `json:"repository_url"`
	PullRequest   json.RawMessage `json:"pull_request"`
	Locked        bool            `json:"locked"`
	UpdatedAt     string          `json:"updated_at"`
}

// issue checks that a is an issue at all, and returns it with the
// repository it belongs to (from repository_url).
func (a issueAnswer) issue() (Issue, Repo, error) {
	is := Issue{Number: a.Number, Locked: a.Locked,
		PullRequest: len(a.PullRequest) > 0 && string(a.PullRequest) != "null"}
	switch {
	case a.Number <= 0:
		return is, Repo{}, errors.New("the answer has no issue number")
	case len(a.Body) == 0:
		return is, Repo{}, fmt.Errorf("the answer for #%d has no body field", a.Number)
	}
	if string(a.Body) != "null" {
		if err := json.Unmarshal(a.Body, &is.Body); err != nil {
			return is, Repo{}, fmt.Errorf("the answer for #%d has a body that is not a string", a.Number)
		}
	}
	repo, ok := repoOfURL(a.RepositoryURL)
	if !ok {
		return is, Repo{}, fmt.Errorf("the answer for #%d names no repository (repository_url %q)", a.Number, cutURL(a.RepositoryURL))
	}
	if a.UpdatedAt != "" {
		t, err := time.Parse(time.RFC3339, a.UpdatedAt)
		if err != nil {
			return is, Repo{}, fmt.Errorf("the answer for #%d has an updated_at that is not a time: %q", a.Number, cutURL(a.UpdatedAt))
		}
		is.UpdatedAt = t
	}
	return is, repo, nil
}

// repoOfURL is the repository an API URL of GitHub names
// (https://api.github.com/repos/o/r, or below /api/v3/ on GitHub
// Enterprise): the two path segments after its last /repos/.
func repoOfURL(u string) (Repo, bool) {
	i := strings.LastIndex(u, "/repos/")
	if i < 0 {
		return Repo{}, false
	}
	r, err := ParseRepo(u[i+len("/repos/"):])
	return r, err == nil
}

// cutURL bounds a value of an answer shown in an error.
func cutURL(s string) string {
	if r := []rune(s); len(r) > 100 {
		return string(r[:100]) + "…"
	}
	return s
}

// sameRepo compares repositories as GitHub names them, without case.
func sameRepo(a, b Repo) bool {
	return strings.EqualFold(a.Owner, b.Owner) && strings.EqualFold(a.Name, b.Name)
}

// decodeIssue checks that raw is issue n of repo as GET .../issues/{n}
// answers it (that number, a repository_url naming repo, a body string or
// null); for another well-formed issue, elsewhere says which ("o/r#8"), so
// that a redirected read can say where the issue moved.
func decodeIssue(raw []byte, repo Repo, n int) (is Issue, elsewhere string, err error) {
	var a issueAnswer
	if err := decode(raw, '{', &a); err != nil {
		return Issue{}, "", err
	}
	is, at, err := a.issue()
	if err != nil {
		return Issue{}, "", err
	}
	if is.Number != n || !sameRepo(at, repo) {
		where := fmt.Sprintf("%s#%d", at, is.Number)
		return Issue{}, where, fmt.Errorf("the answer is %s, not %s#%d", where, repo, n)
	}
	return is, "", nil
}

// decodeIssues checks a page of the label listing: a JSON list of issues of
// repo, each with its number and body field (where the marker is looked for).
func decodeIssues(raw []byte, repo Repo) ([]Issue, error) {
	var as []issueAnswer
	if err := decode(raw, '[', &as); err != nil {
		return nil, err
	}
	out := make([]Issue, 0, len(as))
	for i, a := range as {
		is, at, err := a.issue()
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		if !sameRepo(at, repo) {
			return nil, fmt.Errorf("item %d is %s#%d, not an issue of %s", i, at, is.Number, repo)
		}
		out = append(out, is)
	}
	return out, nil
}

// commentAnswer is what post reads of a comment; a null body or user
// (a deleted account) decodes as empty.
type commentAnswer struct {
	ID       int64  `json:"id"`
	Body     string `json:"body"`
	IssueURL string `json:"issue_url"`
	User     struct {
		Login string `json:"login"`
	} `json:"user"`
}

// decodeComments checks a page of issue n's comments: a JSON list of
// comments, each with its id and an issue_url naming issue n of repo (a
// deleted author's comment has user null and stays).
func decodeComments(raw []byte, repo Repo, n int) ([]Comment, error) {
	var as []commentAnswer
	if err := decode(raw, '[', &as); err != nil {
		return nil, err
	}
	want := fmt.Sprintf("/repos/%s/issues/%d", repo, n)
	out := make([]Comment, 0, len(as))
	for i, a := range as {
		if a.ID <= 0 {
			return nil, fmt.Errorf("item %d is not a comment: it has no id", i)
		}
		if !hasSuffixFold(a.IssueURL, want) {
			return nil, fmt.Errorf("comment %d is not one of %s#%d (issue_url %q)", a.ID, repo, n, cutURL(a.IssueURL))
		}
		out = append(out, Comment{ID: a.ID, Author: a.User.Login, Body: a.Body})
	}
	return out, nil
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// decodeUser checks GET /user's answer: an object with a login.
func decodeUser(raw []byte) (string, error) {
	var a struct {
		Login string `json:"login"`
	}
	if err := decode(raw, '{', &a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Login) == "" {
		return "", errors.New("the answer names no login")
	}
	return a.Login, nil
}

// decodePullHead checks GET .../pulls/{n}'s answer: pull request n with a
// head commit, the commit the status goes on.
func decodePullHead(raw []byte, n int) (string, error) {
	var a struct {
		Number int `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	if err := decode(raw, '{', &a); err != nil {
		return "", err
	}
	switch {
	case a.Number != n:
		return "", fmt.Errorf("the answer is pull request #%d, not #%d", a.Number, n)
	case !shaRE.MatchString(a.Head.SHA):
		return "", fmt.Errorf("the answer for pull request #%d has no head commit (head.sha %q)", n, cutURL(a.Head.SHA))
	}
	return a.Head.SHA, nil
}

// decodePullNumbers checks a page of GET .../pulls: a list of pull
// requests, each with its number.
func decodePullNumbers(raw []byte) ([]int, error) {
	var pulls []struct {
		Number int `json:"number"`
	}
	if err := decode(raw, '[', &pulls); err != nil {
		return nil, err
	}
	var out []int
	for _, pr := range pulls {
		if pr.Number <= 0 {
			return nil, fmt.Errorf("a pull request without a number")
		}
		out = append(out, pr.Number)
	}
	return out, nil
}

// decodeCheckRuns checks a page of GET .../commits/{sha}/check-runs: an
// object whose check_runs is a list of check runs, each with its id.
func decodeCheckRuns(raw []byte) ([]CheckRun, error) {
	var a struct {
		CheckRuns json.RawMessage `json:"check_runs"`
	}
	if err := decode(raw, '{', &a); err != nil {
		return nil, err
	}
	if len(a.CheckRuns) == 0 {
		return nil, errors.New("the answer has no check_runs list")
	}
	var rs []struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		HeadSHA    string `json:"head_sha"`
		ExternalID string `json:"external_id"`
		Status     string `json:"status"`
		Conclusion string `json:"conclusion"`
		Output     struct {
			AnnotationsCount int `json:"annotations_count"`
		} `json:"output"`
	}
	if err := decode(a.CheckRuns, '[', &rs); err != nil {
		return nil, fmt.Errorf("check_runs: %w", err)
	}
	out := make([]CheckRun, 0, len(rs))
	for i, r := range rs {
		if r.ID <= 0 {
			return nil, fmt.Errorf("check_runs item %d is not a check run: it has no id", i)
		}
		out = append(out, CheckRun{ID: r.ID, Name: r.Name, HeadSHA: r.HeadSHA, ExternalID: r.ExternalID,
			Status: r.Status, Conclusion: r.Conclusion, AnnotationsCount: r.Output.AnnotationsCount})
	}
	return out, nil
}

// noneCreated is the error of a create GitHub answered as done but whose
// answer names nothing created (an id or number of 0). The create may have
// landed, so a retry first looks for it. A dry run's creates are answered
// with 0 on purpose and are not checked.
func noneCreated(method, path, what string) error {
	return &APIError{Kind: KindBadAnswer, Method: method, Path: path, Message: "the answer names no " + what}
}
