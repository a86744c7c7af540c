package publish

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ovg-project/ci-report/render"
)

// Repo names a repository.
type Repo struct {
	Owner string
	Name  string
}

// ParseRepo parses "owner/name".
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") ||
		strings.ContainsAny(s, " \t\r\n?#%") {
		return Repo{}, fmt.Errorf("repository %q: want owner/name", s)
	}
	return Repo{Owner: owner, Name: name}, nil
}

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// WorkflowRun is what post needs of a workflow run.
type WorkflowRun struct {
	ID                                int64
	HeadSHA, Conclusion, DisplayTitle string
}

// Issue is what post needs of an issue (or of a pull request, which the
// issues API also returns).
type Issue struct {
	Number      int
	Body        string
	PullRequest bool
	Locked      bool // GitHub refuses comments by those who are not collaborators
	// UpdatedAt is the issue's updated_at (whole seconds); zero when the
	// answer had none. A read older than a PATCH's answer lags behind the
	// write (docs/publish.md §6).
	UpdatedAt time.Time
}

// Comment is an issue or pull-request comment.
type Comment struct {
	ID     int64
	Author string
	Body   string
}

// Status is a commit status.
type Status struct {
	State                           string // success, failure, error or pending
	Description, Context, TargetURL string
}

// CheckRun is a check run as post writes and finds it (docs/publish.md §15).
type CheckRun struct {
	ID          int64 // set by GitHub; 0 in a request
	Name        string
	HeadSHA     string // the commit; only in a create
	ExternalID  string
	DetailsURL  string
	Status      string    // completed
	Conclusion  string    // success or failure
	CompletedAt time.Time // when post wrote it (zero in a list)
	Title       string
	Summary     string
	Annotations []render.Annotation
	// AnnotationsCount is how many annotations GitHub holds (in a list).
	AnnotationsCount int
}

// ErrorKind classifies a refused or failed request.
type ErrorKind int

// Kinds of APIError.
const (
	KindOther         ErrorKind = iota
	KindPrimaryRate             // primary rate limit: wait for Reset
	KindSecondaryRate           // secondary rate limit: wait RetryAfter, then back off
	KindAuth                    // 401 or a 403 that is not a rate limit
	KindNotFound                // 404
	KindValidation              // 422
	KindServer                  // 5xx
	KindNetwork                 // no response: connection refused, reset, timeout
	// KindBadAnswer is an answer that is not what was asked (answer.go).
	// Retried like a 5xx: a proxy or cache in front of GitHub answers so
	// now and then, GitHub itself is not known to.
	KindBadAnswer
	// KindMoved is a redirect not followed (a write, or another host), or a
	// read a redirect took to another issue or repository. Not retried.
	KindMoved
)

// APIError is a request that GitHub refused or that got no response.
type APIError struct {
	Kind       ErrorKind
	Method     string        // HTTP method
	Path       string        // API path, e.g. /repos/o/r/issues/7
	StatusCode int           // 0 when no response came
	Message    string        // GitHub's message, plus validation details
	Reset      time.Time     // when a primary rate limit ends (zero when unknown)
	RetryAfter time.Duration // the server's Retry-After (0 when absent)
	Moved      string        // KindMoved: where the issue is now ("o/r#7"), when the answer said
	Err        error         // the underlying error, for errors.Is/As
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", e.Method, e.Path)
	switch {
	case e.StatusCode == 0 && e.Kind == KindBadAnswer:
		b.WriteString("answered") // a success whose answer names nothing created (noneCreated)
	case e.StatusCode == 0:
		b.WriteString("no response")
	default:
		fmt.Fprintf(&b, "HTTP %d", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	} else if e.StatusCode == 0 && e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *APIError) Unwrap() error { return e.Err }

// ErrInput marks failures caused by post's inputs or by data it cannot
// use (a malformed issue body, a body that would exceed GitHub's limit), as
// opposed to GitHub refusing or being unreachable. The CLI maps it to exit 2.
var ErrInput = errors.New("invalid input")

// inputErrorf returns an error that wraps ErrInput.
func inputErrorf(format string, a ...any) error {
	return &inputError{fmt.Sprintf(format, a...)}
}

type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrInput }
