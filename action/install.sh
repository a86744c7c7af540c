#!/usr/bin/env bash
# Installs ci-report for the action (action.yml): the released binary for this
# runner's OS and architecture, verified against the release's checksums.txt
# (the file .goreleaser.yaml writes), into $CI_REPORT_BIN_DIR. When the
# version names no release (a branch, a commit, `source`, or a tag whose
# release lacks this platform), it says so on stdout as `build=true` for the
# action's next steps, which build ci-report from the action's own source. A
# checksum that does not match is an error, never a reason to fall back.
#
# Environment: CI_REPORT_VERSION (the action's `version` input: vX.Y.Z,
# `source`, or empty for the action's own ref), CI_REPORT_ACTION_REF
# (github.action_ref), CI_REPORT_BIN_DIR (where the binary goes),
# CI_REPORT_RELEASES (the releases' download URL, default
# https://github.com/ovg-project/ci-report/releases/download; tests point it
# at a local server). Writes `build=true|false` and `version=…` to stdout in
# the form of $GITHUB_OUTPUT.
set -euo pipefail

fail() { echo "ci-report action: $*" >&2; exit 1; }

version=${CI_REPORT_VERSION:-}
[ -n "$version" ] || version=${CI_REPORT_ACTION_REF:-}
bin_dir=${CI_REPORT_BIN_DIR:?CI_REPORT_BIN_DIR is not set}
releases=${CI_REPORT_RELEASES:-https://github.com/ovg-project/ci-report/releases/download}

build() {
  echo "ci-report action: $1; building ci-report from the action's source" >&2
  echo "build=true"
  echo "version=$version"
  exit 0
}

# Only a release tag has binaries; anything else is built from source.
if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]]; then
  build "version '${version:-(none)}' is not a release tag (vX.Y.Z)"
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) build "no release binary for $(uname -s)" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) build "no release binary for $(uname -m)" ;;
esac

# The archive name is .goreleaser.yaml's archives.name_template.
asset="ci-report_${version#v}_${os}_${arch}.tar.gz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fetch URL FILE: 0 when downloaded, 4 when the server says 404 (no such
# release or asset), else an error.
fetch() {
  local code
  code=$(curl --silent --show-error --location --retry 3 --retry-delay 2 --output "$2" --write-out '%{http_code}' "$1") ||
    fail "downloading $1 failed"
  case "$code" in
    200) return 0 ;;
    404) return 4 ;;
    *) fail "downloading $1: HTTP $code" ;;
  esac
}

rc=0
fetch "$releases/$version/checksums.txt" "$tmp/checksums.txt" || rc=$?
[ "$rc" -eq 0 ] || build "release $version has no checksums.txt"
want=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$tmp/checksums.txt")
[ -n "$want" ] || build "release $version has no $asset"
rc=0
fetch "$releases/$version/$asset" "$tmp/$asset" || rc=$?
[ "$rc" -eq 0 ] || fail "release $version lists $asset in checksums.txt, but downloading it gave 404"

if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$tmp/$asset" | awk '{ print $1 }')
else
  got=$(shasum -a 256 "$tmp/$asset" | awk '{ print $1 }')
fi
[ "$got" = "$want" ] || fail "$asset: checksum $got does not match checksums.txt ($want); not installed"

mkdir -p "$bin_dir"
tar -xzf "$tmp/$asset" -C "$tmp" ci-report || fail "$asset holds no ci-report binary"
install -m 0755 "$tmp/ci-report" "$bin_dir/ci-report"
echo "ci-report action: installed ci-report $version ($os/$arch, sha256 $got) into $bin_dir" >&2
echo "build=false"
echo "version=$version"
