package runner

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// excerpt cuts the lines of a failed case's serve.log that a reader looks
// at first (docs/formats.md §4.9), nil when there is none: around the
// first error signature of the server whose log held the evidence's best
// match, else of the first server with one; else, for a co-location case
// that logged burst_offsets, from the first server's burst offset. The
// excerpt is a pointer into the artifact, so a log that cannot be read
// gives none rather than failing the case: the log itself is uploaded.
func (r *Runner) excerpt(c *Case, res *collect.CaseResult, ev evidence) *collect.Excerpt {
	if !res.Failed() {
		return nil
	}
	c.mu.Lock()
	servers := append([]*Server(nil), c.servers...)
	c.mu.Unlock()
	if len(servers) == 0 {
		return nil
	}
	// The server with the evidence's best match first, then the rest in order.
	for i, s := range servers {
		if ev.Found && ev.Where == s.Plan.Name+"/serve.log" {
			servers[0], servers[i] = servers[i], servers[0]
			break
		}
	}
	for _, s := range servers {
		if ex := r.excerptOf(s, s.LogStart(), engine.FindErrorExcerpt); ex != nil {
			return ex
		}
	}
	var logged struct {
		Burst collect.Ordered[int64] `json:"burst_offsets"`
	}
	if len(res.Log) == 0 || json.Unmarshal(res.Log, &logged) != nil {
		return nil
	}
	for _, name := range logged.Burst.Keys() {
		off, _ := logged.Burst.Get(name)
		for _, s := range servers {
			if s.Plan.Name == name && off >= 0 {
				return r.excerptOf(s, off, engine.BurstExcerpt)
			}
		}
	}
	return nil
}

// excerptOf reads s's serve.log from the byte offset from with find, and
// makes the excerpt's path relative to the part and its lines redacted.
func (r *Runner) excerptOf(s *Server, from int64, find func(io.Reader, int64) (collect.Excerpt, bool, error)) *collect.Excerpt {
	f, err := os.Open(s.LogPath())
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
	rel, err := filepath.Rel(r.OutDir, s.LogPath())
	if err != nil {
		rel = filepath.Join(s.Plan.Name, "serve.log")
	}
	ex.File = filepath.ToSlash(rel)
	red := r.Redactor()
	for i, l := range ex.Lines {
		ex.Lines[i] = text.CutLine(red.String(l), collect.ExcerptLineCut)
	}
	if ex.Validate() != nil {
		return nil
	}
	return &ex
}
