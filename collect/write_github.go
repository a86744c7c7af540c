package collect

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// GitHubFromEnv reads the GitHub Actions run context from the environment
// (GITHUB_RUN_ID, ..., GITHUB_REPOSITORY); checkRunID is --check-run-id, else
// CI_REPORT_CHECK_RUN_ID. It returns nil outside Actions and an error naming
// the variable when a number is malformed.
func GitHubFromEnv(getenv func(string) string, checkRunID string) (*GitHubContext, error) {
	checkRunID = cmp.Or(checkRunID, getenv("CI_REPORT_CHECK_RUN_ID"))
	if getenv("GITHUB_ACTIONS") != "true" && checkRunID == "" {
		return nil, nil
	}
	runID, errRun := envInt(getenv, "GITHUB_RUN_ID", "")
	attempt, errAttempt := envInt(getenv, "GITHUB_RUN_ATTEMPT", "")
	checkRun, errCheck := envInt(getenv, "check run id (--check-run-id / CI_REPORT_CHECK_RUN_ID)", checkRunID)
	if err := cmp.Or(errRun, errAttempt, errCheck); err != nil {
		return nil, err
	}
	return &GitHubContext{RunID: runID, RunAttempt: int(attempt), CheckRunID: checkRun, Job: getenv("GITHUB_JOB"),
		SHA: getenv("GITHUB_SHA"), Ref: getenv("GITHUB_REF"), ServerURL: getenv("GITHUB_SERVER_URL"),
		Repository: getenv("GITHUB_REPOSITORY")}, nil
}

// envInt parses the variable name (or value when given) as a non-negative
// integer; empty is 0.
func envInt(getenv func(string) string, name, value string) (int64, error) {
	if value = cmp.Or(value, getenv(name)); value == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("GitHub context: %s is %q, want a non-negative integer", name, value)
	}
	return n, nil
}

// WorkflowCommand formats a GitHub Actions workflow command
// (`::error title=T::message`) on one line, escaped as the runner unescapes it
// (actions/toolkit packages/core/src/command.ts: %, CR and LF, and in a
// property also : and ,), so no value can end the command or start another.
func WorkflowCommand(name string, props [][2]string, message string) string {
	var b strings.Builder
	b.WriteString("::")
	b.WriteString(name)
	sep := " "
	for _, p := range props {
		b.WriteString(sep + p[0] + "=" + commandProperty.Replace(p[1]))
		sep = ","
	}
	b.WriteString("::")
	b.WriteString(commandData.Replace(message))
	return b.String()
}

var (
	commandData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	commandProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)
