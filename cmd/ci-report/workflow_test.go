package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ovg-project/ci-report/merge"
)

// workflowDir holds the example workflows, one per profile: gpu-<profile>.yml.
const workflowDir = "../../docs/workflows"

// The workflows are read line by line rather than with a YAML parser, to
// need no YAML module: the matrix must be one flow-style line
// `part: [a, b, c]` (the workflow says so next to it), and the run step's
// command is the line that starts `ci-report run` with its `\`
// continuations. A workflow written otherwise fails here, never passes
// unread.
var (
	matrixLine  = regexp.MustCompile(`^\s*part:\s*\[([^\]]*)\]\s*(#.*)?$`)
	profileLine = regexp.MustCompile(`^\s*PROFILE:\s*(\S+)\s*$`)
)

// workflowCommand returns the shell command of the workflow that starts
// with prefix, continuation lines joined.
func workflowCommand(t *testing.T, file string, lines []string, prefix string) string {
	t.Helper()
	var found []string
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		cmd := l
		for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, `\`) + " " + strings.TrimSpace(lines[i])
		}
		found = append(found, cmd)
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d commands start %q, want 1", file, len(found), prefix)
	}
	return found[0]
}

// The acceptance of the profile's parts: the union of `plan --part P` over
// the example workflow's matrix is exactly the profile's cases, none twice,
// and each GPU job runs exactly `plan --part P` (no other selection flag),
// for every profile that has an example workflow. The report job reads the
// plan, so that a part that never uploaded shows its cases as not run.
func TestExampleWorkflowsRunEveryCaseOnce(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(workflowDir, "gpu-*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workflows in %s (%v)", workflowDir, err)
	}
	for _, file := range files {
		profile := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(file), "gpu-"), ".yml")
		t.Run(profile, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			var matrix [][]string
			var profiles []string
			for _, l := range lines {
				if m := matrixLine.FindStringSubmatch(l); m != nil {
					var parts []string
					for _, p := range strings.Split(m[1], ",") {
						parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
					}
					matrix = append(matrix, parts)
				}
				if m := profileLine.FindStringSubmatch(l); m != nil {
					profiles = append(profiles, m[1])
				}
			}
			if len(matrix) != 1 {
				t.Fatalf("%s: %d matrix lines `part: [...]`, want 1", file, len(matrix))
			}
			if !slices.Equal(profiles, []string{profile}) {
				t.Errorf("%s: PROFILE is set to %v, want [%s] as the file name says", file, profiles, profile)
			}
			parts := matrix[0]

			// What the GPU jobs run: `--part "$PART"` of the profile, PART
			// being the matrix's part, and nothing that narrows it further.
			run := workflowCommand(t, file, lines, "ci-report run ")
			// --kernel-log: without the kernel's messages an Xid, ECC
			// error or OOM kill would not class a case infra (docs/runner.md §5.10).
			for _, want := range []string{`--profile "$PROFILE"`, `--part "$PART"`, `--kernel-log "`} {
				if !strings.Contains(run, want) {
					t.Errorf("%s: the run command %q lacks %s", file, run, want)
				}
			}
			for _, narrowing := range []string{"--engines", "--models", "--cases", "--shard", "--skip-", "--plan"} {
				if strings.Contains(run, narrowing) {
					t.Errorf("%s: the run command %q narrows the part with %s: its cases would not be the part's", file, run, narrowing)
				}
			}
			if !strings.Contains(string(data), "PART: ${{ matrix.part }}") {
				t.Errorf("%s: PART is not the matrix's part", file)
			}
			// The report job knows the profile's whole plan: through the
			// action (action.yml's `plan: profile`), or a post command with
			// --plan of `ci-report plan --profile "$PROFILE"`.
			if reportUsesAction(lines) {
				if !slices.Contains(lines, "          plan: profile") || !slices.Contains(lines, "          profile: ${{ env.PROFILE }}") {
					t.Errorf("%s: the report job's action step lacks `plan: profile` with `profile: ${{ env.PROFILE }}`: a part that never uploaded would show no cases", file)
				}
			} else {
				if post := workflowCommand(t, file, lines, "ci-report post "); !strings.Contains(post, "--plan ") {
					t.Errorf("%s: the post command %q has no --plan: a part that never uploaded would show no cases", file, post)
				}
				if plan := workflowCommand(t, file, lines, `ci-report plan --profile "$PROFILE" >`); strings.Contains(plan, "--part") {
					t.Errorf("%s: the report job's plan %q is one part's, not the profile's", file, plan)
				}
			}

			profileParts := planLines(t, "--profile", profile, "--list", "parts")
			if d := cmp.Diff(sorted(profileParts), sorted(parts)); d != "" {
				t.Errorf("%s: the matrix %v is not the profile's parts %v (-profile +matrix):\n%s", file, parts, profileParts, d)
			}
			in := map[string][]string{} // case → the matrix parts that run it
			for _, part := range parts {
				for _, c := range planLines(t, "--profile", profile, "--part", part, "--list", "cases") {
					in[c] = append(in[c], part)
				}
			}
			for _, c := range planLines(t, "--profile", profile, "--list", "cases") {
				switch n := len(in[c]); {
				case merge.IsSetupCase(c) && n == 0:
					t.Errorf("%s: no part of the matrix runs %s", file, c)
				case !merge.IsSetupCase(c) && n != 1:
					t.Errorf("%s: case %s is run by parts %v of the matrix, want exactly one", file, c, in[c])
				}
				delete(in, c)
			}
			for c, ps := range in {
				t.Errorf("%s: parts %v run %s, which is not a case of the profile", file, ps, c)
			}
		})
	}
}

// reportUsesAction says whether a workflow's report step is ci-report's
// action (`uses: ovg-project/ci-report@…`).
func reportUsesAction(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "uses: ovg-project/ci-report@") {
			return true
		}
	}
	return false
}

// planLines runs `ci-report plan args...` and returns its output lines.
func planLines(t *testing.T, args ...string) []string {
	t.Helper()
	e, out, errb := testEnv(nil)
	if code := mainEnv(context.Background(), e, append([]string{"plan"}, args...)); code != 0 {
		t.Fatalf("plan %v: exit %d: %s", args, code, errb)
	}
	return strings.Fields(out.String())
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

var (
	jobLine = regexp.MustCompile(`^  ([A-Za-z0-9_-]+):\s*(#.*)?$`)
	// A job posts to the results issue when it runs `ci-report post` or
	// uses ci-report's action.
	postsLine = regexp.MustCompile(`(^|\s)ci-report post(\s|$)|^\s*(-\s+)?uses:\s*\S*ci-report\S*@`)
)

// workflowJobs splits a workflow's lines into its jobs, by name.
func workflowJobs(lines []string) map[string][]string {
	jobs := map[string][]string{}
	in, name := false, ""
	for _, l := range lines {
		switch {
		case l == "jobs:":
			in = true
		case in && jobLine.MatchString(l):
			name = jobLine.FindStringSubmatch(l)[1]
		case in && name != "" && (strings.HasPrefix(l, "   ") || strings.TrimSpace(l) == ""):
			jobs[name] = append(jobs[name], l)
		case in && !strings.HasPrefix(l, " ") && strings.TrimSpace(l) != "":
			in, name = false, ""
		}
	}
	return jobs
}

// Issue 18: every job that posts to the results issue, in every example
// workflow (each profile, each suite), is in one concurrency group named
// after the issue and never cancels a post in progress, so that posts to
// the issue run one at a time whatever workflow they come from.
func TestExampleWorkflowsSerializePosts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(workflowDir, "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example workflows in %s: %v", workflowDir, err)
	}
	want := []string{"    concurrency:",
		"      group: ci-report-results-issue-${{ vars.GPU_CI_RESULTS_ISSUE || 'gpu-ci' }}",
		"      cancel-in-progress: false"}
	posting := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for name, job := range workflowJobs(strings.Split(string(data), "\n")) {
			if !slices.ContainsFunc(job, postsLine.MatchString) {
				continue
			}
			posting++
			i := slices.Index(job, want[0])
			if i < 0 || i+len(want) > len(job) || !slices.Equal(job[i:i+len(want)], want) {
				t.Errorf("%s: job %s posts to the results issue without the concurrency block\n%s", filepath.Base(file), name, strings.Join(want, "\n"))
			}
		}
	}
	if posting == 0 {
		t.Errorf("no job of %s posts to the results issue: the check read nothing", workflowDir)
	}
}
