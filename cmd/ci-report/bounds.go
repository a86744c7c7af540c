package main

import (
	"cmp"
	"flag"
	"fmt"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// boundFlags puts the limits of internal/bounds on every flag of fs, one rule
// for all (docs/design.md §3): bounds.MaxString bytes and bounds.MaxList
// entries a value, bounds.MaxList uses of a flag. The returned func gives the
// first error of any flag with its value cut (bounds.Quote), since the flag
// package would quote it whole.
func boundFlags(fs *flag.FlagSet) (violation func() error) {
	var first error
	fs.VisitAll(func(f *flag.Flag) {
		b := &boundedValue{Value: f.Value, name: f.Name, first: &first}
		if bf, ok := f.Value.(boolFlag); ok && bf.IsBoolFlag() {
			f.Value = &boundedBool{b}
			return
		}
		f.Value = b
	})
	return func() error { return first }
}

// boolFlag is the flag package's interface for a flag that takes no value.
type boolFlag interface {
	flag.Value
	IsBoolFlag() bool
}

// boundedValue is a flag's value under the limits.
type boundedValue struct {
	flag.Value
	name  string
	sets  int
	first *error // the first violation of any flag of the set
}

func (b *boundedValue) Set(v string) error {
	b.sets++
	err := checkValue("--"+b.name, v)
	if err == nil && b.sets > bounds.MaxList {
		err = fmt.Errorf("--%s: given %d times, over the limit of %d", b.name, b.sets, bounds.MaxList)
	}
	shown := err
	if err == nil {
		if err = b.Value.Set(v); err != nil {
			// The flag package's own wording, with the value cut.
			shown = fmt.Errorf("invalid value %s for flag -%s: %w", bounds.Quote(v), b.name, err)
		}
	}
	if *b.first == nil {
		*b.first = shown
	}
	return err
}

// boundedBool keeps a bool flag one that takes no value.
type boundedBool struct{ *boundedValue }

func (b *boundedBool) IsBoolFlag() bool { return true }

// checkValue is the limit on one value: its size and its comma-separated
// entries; what names the flag.
func checkValue(what, v string) error {
	return cmp.Or(bounds.String(what, v), bounds.List(what+" (comma-separated)", strings.Count(v, ",")+1, bounds.MaxList))
}

// checkArgs puts the size limit on each positional argument (a directory,
// a file): how many there are is the shell's business.
func checkArgs(pos []string) error {
	for i, a := range pos {
		if err := bounds.String(fmt.Sprintf("argument %d", i+1), a); err != nil {
			return err
		}
	}
	return nil
}
