package main

import (
	"regexp"
	"runtime/debug"
	"strings"
)

// version is ci-report's version, written into part.json and printed by
// --version. A release build (built without VCS stamping) stamps it, and
// revision and revisionTime, with -ldflags -X (.goreleaser.yaml); `go install
// …@vX.Y.Z` stamps nothing but records the module version (releaseVersion).
// defaultVersion is version as the source sets it, before any stamping.
const defaultVersion = "0.3.0"

var (
	version      = defaultVersion
	revision     string
	revisionTime string
)

// releaseSemver is a module version that names a release: vX.Y.Z with an
// optional pre-release, but not a pseudo-version.
var (
	releaseSemver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	pseudoVersion = regexp.MustCompile(`[-.][0-9]{14}-[0-9a-f]{12}$`)
)

// releaseVersion is the stamped version, else the module version `go install
// …@vX.Y.Z` recorded, else the default.
func releaseVersion(def string, bi *debug.BuildInfo) string {
	if bi == nil || def != defaultVersion {
		return def
	}
	v := strings.TrimSuffix(bi.Main.Version, "+incompatible")
	if !releaseSemver.MatchString(v) || pseudoVersion.MatchString(v) {
		return def
	}
	return strings.TrimPrefix(v, "v")
}
