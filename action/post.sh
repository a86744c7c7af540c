#!/usr/bin/env bash
# The action's report step (action.yml): turns the action's inputs, given as
# IN_* environment variables (never pasted into the script, so an input
# cannot inject shell), into one `ci-report post` command line, with
# --github-output for the action's outputs. Exit status: ci-report's.
set -euo pipefail

fail() { echo "ci-report action: $*" >&2; exit 2; }
flag_true() {
  case "${1,,}" in
    true | yes | 1) return 0 ;;
    false | no | 0 | "") return 1 ;;
    *) fail "$2 must be true or false, not '$1'" ;;
  esac
}

args=(post --github-output)
[ -z "${IN_ISSUE:-}" ] || args+=(--issue "$IN_ISSUE")
[ -z "${IN_ISSUE_LABEL:-}" ] || args+=(--issue-label "$IN_ISSUE_LABEL")
if flag_true "${IN_CREATE:-}" create; then args+=(--create); fi
[ -z "${IN_PR:-}" ] || args+=(--pr "$IN_PR")
[ -z "${IN_PR_BRANCH:-}" ] || args+=(--pr-branch "$IN_PR_BRANCH")
[ -z "${IN_PROFILE:-}" ] || args+=(--profile "$IN_PROFILE")
case "${IN_PLAN:-}" in
  "") ;;
  profile)
    # The profile's whole plan, written by the installed ci-report: a part
    # that never uploaded then shows its cases as not run.
    [ -n "${IN_PROFILE:-}" ] || fail "plan: profile needs the profile input"
    plan="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ci-report-plan-$IN_PROFILE.json"
    ci-report plan --profile "$IN_PROFILE" > "$plan"
    args+=(--plan "$plan")
    ;;
  *) args+=(--plan "$IN_PLAN") ;;
esac
[ -z "${IN_CONFIG:-}" ] || args+=(--config "$IN_CONFIG")
case "${IN_KNOWN_ISSUES:-}" in
  "") ;;
  # The known-issues file this version of ci-report ships.
  bundled) args+=(--known-issues "${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}/docs/known-issues.json") ;;
  *) args+=(--known-issues "$IN_KNOWN_ISSUES") ;;
esac
[ -z "${IN_ARTIFACT_URL:-}" ] || args+=(--artifact-url "$IN_ARTIFACT_URL")
[ -z "${IN_CHECK_RUN:-}" ] || args+=(--check-run "$IN_CHECK_RUN")
case "${IN_FAIL_ON:-never}" in
  never | "") ;;
  verdict) args+=(--fail-on verdict) ;;
  new) args+=(--fail-on new) ;;
  *) fail "fail-on must be never, verdict or new, not '$IN_FAIL_ON'" ;;
esac
if flag_true "${IN_JOB_SUMMARY:-}" job-summary; then args+=(--job-summary); fi
if flag_true "${IN_DRY_RUN:-}" dry-run; then args+=(--dry-run); fi

# Further flags, split at white space (`--arms parent,fix` is two words; a
# value holding a space needs an input of its own). Then the parts, one a
# line; blank lines are skipped.
read -r -d '' -a extra <<< "${IN_ARGS:-}" || true
args+=("${extra[@]}")
parts=()
while IFS= read -r line; do
  line=${line%$'\r'}
  [ -z "${line// /}" ] || parts+=("$line")
done <<< "${IN_PARTS:-}"
[ "${#parts[@]}" -gt 0 ] || fail "parts is empty: give the directory of the downloaded parts"

# The parts' directory may not exist when no GPU job uploaded anything:
# with the plan, the report then says so (every part is not run); without
# it ci-report refuses a directory that holds no part (docs/formats.md §1.2).
for p in "${parts[@]}"; do
  case "$p" in *.json) ;; *) mkdir -p -- "$p" ;; esac
done

set -x
exec ci-report "${args[@]}" -- "${parts[@]}"
