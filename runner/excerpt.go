package runner

import (
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// excerpt cuts the lines of a failed case's serve.log a reader looks at first
// (docs/formats.md §4.9, docs/runner.md §5.10), nil when there is none. A
// log that cannot be read gives none rather than failing the case.
func (r *Runner) excerpt(c *Case, res *collect.CaseResult, ev evidence) *collect.Excerpt {
	servers := c.startedServers()
	if len(servers) == 0 {
		return nil
	}
	// The server with the evidence's best match first, then the rest in order.
	best := func(s *Server) bool { return ev.Found && ev.Where == s.Plan.Name+"/serve.log" }
	if i := slices.IndexFunc(servers, best); i >= 0 {
		servers[0], servers[i] = servers[i], servers[0]
	}
	for _, s := range servers {
		if sc, err := s.logScan(r); err == nil && sc.HasExcerpt {
			if ex := r.finishExcerpt(s, sc.Excerpt); ex != nil {
				return ex
			}
		}
	}
	var logged struct {
		Burst collect.Ordered[int64] `json:"burst_offsets"`
	}
	if len(res.Log) > 0 && json.Unmarshal(res.Log, &logged) == nil {
		for _, name := range logged.Burst.Keys() {
			off, _ := logged.Burst.Get(name)
			if i := slices.IndexFunc(servers, func(s *Server) bool { return s.Plan.Name == name }); i >= 0 && off >= 0 {
				return r.linesExcerpt(servers[i], off, engine.BurstExcerpt)
			}
		}
	}
	if phase := comparisonPhase(res.Checks); phase != "" {
		if off, ok := c.phaseStart(phase); ok {
			return r.linesExcerpt(servers[0], off, engine.PhaseExcerpt(phase))
		}
	}
	// Nothing matched: the last lines of the first server's serve.log.
	if sc, err := servers[0].logScan(r); err == nil {
		if ex, ok := sc.Tail(); ok {
			return r.finishExcerpt(servers[0], ex)
		}
	}
	return nil
}

// comparisonPhase is the earliest phase (ServerPhases order) of a failed
// root comparison with the native case (`<phase>_tokens_equal`,
// `<phase>_cached_tokens_equal`); "" when there is none.
func comparisonPhase(list []collect.Check) string {
	for _, p := range ServerPhases {
		if slices.ContainsFunc(list, func(ch collect.Check) bool {
			return !ch.OK && ch.CausedBy == "" && (ch.Name == p+"_tokens_equal" || ch.Name == p+"_cached_tokens_equal")
		}) {
			return p
		}
	}
	return ""
}

// linesExcerpt reads the lines of s's serve.log from the byte offset from
// with find (collect.ExcerptMaxLines at most, not the whole log).
func (r *Runner) linesExcerpt(s *Server, from int64, find func(io.Reader, int64) (collect.Excerpt, bool, error)) *collect.Excerpt {
	f, err := r.openLog(s.LogPath())
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	ex, ok, _ := find(f, from)
	if !ok {
		return nil
	}
	return r.finishExcerpt(s, ex)
}

// finishExcerpt makes the path of ex, an excerpt of s's serve.log,
// relative to the part and its lines (and its tail's) redacted.
func (r *Runner) finishExcerpt(s *Server, ex collect.Excerpt) *collect.Excerpt {
	rel, err := filepath.Rel(r.OutDir, s.LogPath())
	if err != nil {
		rel = filepath.Join(s.Plan.Name, "serve.log")
	}
	ex.File = filepath.ToSlash(rel)
	red := r.Redactor()
	// The lines are redacted together, as the log they were cut from: a
	// secret across a line break is found whole, and the line ends kept.
	redact := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := strings.Split(red.String(strings.Join(in, "\n")), "\n")
		for i, l := range out {
			out[i] = text.CutLine(l, collect.ExcerptLineCut)
		}
		return out
	}
	ex.Lines, ex.Tail = redact(ex.Lines), redact(ex.Tail)
	if ex.Validate() != nil {
		return nil
	}
	return &ex
}
