package merge

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ovg-project/ci-report/collect"
)

// Redacted returns rep with every secret of red replaced in every text it
// holds: case and check names, details, setup values, part names, problems,
// logs, perf rows. This is the one place where artifact text enters a
// document, so the redaction is applied to the data, before anything is cut
// (a cut could leave a token's head that no longer matches), escaped
// (Markdown escaping turns ghs_… into ghs\_…) or put in a link, and the size
// budget is planned on the redacted text. The report goes through its own
// JSON encoding, so that every string of it is reached, fields added later
// included; the case logs, already JSON (and most of a report's bytes), are
// redacted as they are rather than encoded again. Without a secret in it,
// rep itself is returned.
func (rep *Report) Redacted(red *collect.Redactor) (*Report, error) {
	shallow := *rep
	shallow.Cases = make([]Case, len(rep.Cases))
	logs := make([]json.RawMessage, len(rep.Cases))
	logsChanged := false
	for i, c := range rep.Cases {
		logs[i] = red.JSON(c.Log)
		logsChanged = logsChanged || !same(logs[i], c.Log)
		c.Log = nil
		shallow.Cases[i] = c
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&shallow); err != nil {
		return nil, fmt.Errorf("redact the report: encode: %w", err)
	}
	data := buf.Bytes()
	out := red.JSON(data)
	if same(out, data) && !logsChanged {
		return rep, nil
	}
	cp := shallow
	if !same(out, data) {
		cp = Report{}
		if err := json.Unmarshal(out, &cp); err != nil {
			return nil, fmt.Errorf("redact the report: decode: %w", err)
		}
	}
	for i := range cp.Cases {
		cp.Cases[i].Log = logs[i]
	}
	return &cp, nil
}

// same reports whether a is b itself, as Redactor.JSON returns its input
// when it replaced nothing.
func same(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
