package collect

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
)

// Problem is a defect of the input that did not stop it from being read: a
// report lists it and the CLI prints it as a warning (docs/formats.md §1.5).
type Problem struct {
	// Part is the part's display name (merge sets it), "perf" for the perf
	// artifacts; "" in a part's own Problems.
	Part  string
	File  string // relative to the part directory ("setup.json")
	Case  string // the case the problem is about, when one is
	Field string // the field at fault as a path (engines.vllm.env)
	What  string // what was wrong, and what the report does about it
}

// String is the problem as one line of text, the form every document and
// merged.json hold: "<part>: <file>: case <case>: <field>: <what>".
func (p Problem) String() string {
	var caseLabel string
	if p.Case != "" {
		caseLabel = "case " + p.Case
	}
	known := []string{p.Part, p.File, caseLabel, p.Field, p.What}
	known = slices.DeleteFunc(known, func(s string) bool { return s == "" })
	return strings.Join(known, ": ")
}

// MarshalText writes the problem as its String (docs/formats.md §7.1).
func (p Problem) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a problem back from its text (a merged.json), as What.
func (p *Problem) UnmarshalText(b []byte) error {
	*p = Problem{What: string(b)}
	return nil
}

// Problems is the text of each problem, in order; nil for none.
func Problems(ps []Problem) []string {
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// problemOf is the problem err, met reading under the part directory dir,
// stands for, followed by then, without the reading machine's paths.
func problemOf(err error, dir, then string) Problem {
	var p Problem
	var fe *fileError
	if errors.As(err, &fe) && fe.Error() == err.Error() {
		p.File = relativeTo(fe.Path, dir)
		err = fe.Err
	}
	var fld *fieldError
	if errors.As(err, &fld) && fld.Error() == err.Error() {
		p.Field, p.What = fld.split()
	} else {
		p.What = err.Error()
	}
	p.What = stripDir(p.What, dir)
	if then != "" {
		p.What += " (" + then + ")"
	}
	return p
}

// relativeTo is path relative to dir, or path when it is not under dir.
func relativeTo(path, dir string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// stripDir makes a message name files under dir relative to it: "read
// <dir>/f: ..." is "f: ...", and any other mention loses the dir.
func stripDir(msg, dir string) string {
	under := filepath.Join(dir, "x")
	under = under[:len(under)-1] // dir and a separator; "" for "."
	if under == "" {
		return strings.TrimPrefix(msg, "read ")
	}
	msg = strings.ReplaceAll(msg, "read "+under, "")
	return strings.ReplaceAll(msg, under, "")
}

// Error is the problem's String, so that a problem can be returned as an
// error (render's option and config checks, docs/render.md §1.1).
func (p Problem) Error() string { return p.String() }
