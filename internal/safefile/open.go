// Package safefile is the one way ci-report opens a file it reads and writes
// a file it makes. It runs as root in CI containers, on paths from flags,
// config keys and artifact trees, so a file it reads is opened without
// blocking and checked to be a regular file before a byte is read (a FIFO
// blocked the open forever, /dev/zero grew memory without end), up to a cap
// by its Kind; and a file it writes keeps what it is (WriteFunc).
package safefile

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// ErrNotRegular is the refusal of anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrEscapes is the refusal of a symbolic link that leaves its directory.
var ErrEscapes = errors.New("a symbolic link that leaves its part directory, not followed")

// ErrTooLarge is the refusal of a file over its kind's cap.
var ErrTooLarge = errors.New("file too large")

// Error is a failure to read the file at Path: "read PATH: ERR".
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return "read " + bounds.Cut(e.Path) + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// Kind is what a file read is, and the most bytes of it that are read: a
// file over Max is refused, with Max and Name in the message.
type Kind struct {
	Name string // says the kind in a message: "config file"
	Max  int64  // the cap in bytes
}

// The kinds of file ci-report reads, and their caps. Each cap is far above
// any real file of the kind, and far below what would strain a runner.
var (
	// Part is a JSON file of a part read whole: part.json, setup.json, the
	// perf files (kilobytes each).
	Part = Kind{"part file", 64 << 20}
	// Merged is a merged.json given to render or post: it holds no phases,
	// so even thousands of cases stay far below this (collect.MaxMergedFile
	// is the same bound, which merge keeps to).
	Merged = Kind{"merged.json", 512 << 20}
	// Config is a --config file (docs/render.md §6).
	Config = Kind{"config file", 1 << 20}
	// KnownIssues is a --known-issues file (docs/formats.md §8).
	KnownIssues = Kind{"known-issues file", 4 << 20}
	// Plan is a --plan file (docs/runner.md §3).
	Plan = Kind{"plan", 1 << 20}
	// Body is an issue body or section that splice reads: GitHub keeps at
	// most 65536 characters of a body, 256 KiB of UTF-8; 1 MiB is room.
	Body = Kind{"issue body", 1 << 20}
	// History is a --history file (docs/formats.md §9).
	History = Kind{"history file", 16 << 20}
	// JUnit is a JUnit XML file at its default cap (import junit --max-bytes).
	JUnit = Kind{"JUnit file", 64 << 20}
	// Metrics is an import's --metrics file.
	Metrics = Kind{"metrics file", 64 << 20}
)

// Open opens the file at path for reading, refusing anything but a regular
// file, without blocking (a FIFO is refused at once). A file that does not
// exist gives an error satisfying errors.Is(err, fs.ErrNotExist); every
// error names the file.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, &Error{Path: path, Err: unwrapPath(err)}
	}
	return checkRegular(f, path, false)
}

// OpenFollow opens the file at path for reading as Open does, but also
// accepts a named pipe: a log another process appends to while ci-report
// runs (run --kernel-log, often `dmesg --follow` into a FIFO). The open does
// not wait for a writer; read the pipe with ReadReady, which does not wait
// for one either. Anything but a regular file or a named pipe is refused.
func OpenFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): say what it is.
		if fi, serr := os.Stat(path); serr == nil && !errors.Is(err, fs.ErrNotExist) {
			err = cmp.Or(refuse(fi.Mode(), true), err)
		}
		return nil, &Error{Path: path, Err: unwrapPath(err)}
	}
	return checkRegular(f, path, true)
}

// OpenIn opens name in the directory root (whose path is dir) for reading,
// as Open does, also refusing a symbolic link that leaves dir.
func OpenIn(root *os.Root, dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// os.Root's error for a link out of the root has no exported
		// sentinel; Lstat tells the reader what the file is.
		if fi, lerr := root.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &Error{Path: path, Err: ErrEscapes}
		}
		return nil, &Error{Path: path, Err: unwrapPath(err)}
	}
	return checkRegular(f, path, false)
}

// Read reads the regular file at path whole, refusing it over k's cap.
func Read(path string, k Kind) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, k)
}

// ReadAll reads r (the file at path, or "stdin") to its end, refusing more
// than k's cap; a regular file is read into one buffer of its size.
func ReadAll(r io.Reader, path string, k Kind) ([]byte, error) {
	var data []byte
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			data = make([]byte, 0, min(max(fi.Size(), 0), k.Max)+1)
		}
	}
	l := Limit(r, k)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := l.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, &Error{Path: path, Err: unwrapPath(err)}
		}
	}
}

// Limit returns a reader of r that fails, rather than ends, past k's cap,
// so that a cut file is never read as a whole one. Its error satisfies
// errors.Is(err, ErrTooLarge) and says the cap: "file too large: over 1 MiB,
// the cap for a config file".
func Limit(r io.Reader, k Kind) *LimitedReader { return &LimitedReader{r: r, k: k} }

// LimitedReader is Limit's reader.
type LimitedReader struct {
	r     io.Reader
	k     Kind
	total int64
}

// Total is the number of bytes read so far.
func (l *LimitedReader) Total() int64 { return l.total }

func (l *LimitedReader) Read(b []byte) (int, error) {
	// One byte past the cap tells a file of exactly Max bytes from a larger one.
	if room := l.k.Max + 1 - l.total; int64(len(b)) > room {
		b = b[:room]
	}
	n, err := l.r.Read(b)
	l.total += int64(n)
	if l.total > l.k.Max {
		return 0, TooLarge(l.k)
	}
	return n, err
}

// TooLarge is the refusal of more than k's cap.
func TooLarge(k Kind) error {
	return fmt.Errorf("%w: over %s, the cap for a %s", ErrTooLarge, Size(k.Max), k.Name)
}

// Size says a byte count in MiB or KiB when it is whole ones.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkRegular returns f when fstat says it is a regular file (or a named
// pipe, when pipes are allowed), else closes it and says what it is. The
// opened handle is checked, so no other file can be swapped in between.
func checkRegular(f *os.File, path string, pipes bool) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil {
		err = refuse(fi.Mode(), pipes)
	}
	if err != nil {
		f.Close()
		return nil, &Error{Path: path, Err: unwrapPath(err)}
	}
	return f, nil
}

// refuse is the refusal of a file of mode m to a reader (nil: it is read).
func refuse(m fs.FileMode, pipes bool) error {
	switch {
	case m.IsRegular(), pipes && m&fs.ModeNamedPipe != 0:
		return nil
	case pipes:
		return fmt.Errorf("%w or a named pipe (%s), not read", ErrNotRegular, Describe(m))
	}
	return fmt.Errorf("%w (%s), not read", ErrNotRegular, Describe(m))
}

// unwrapPath drops the operation and path of an *fs.PathError (Error names
// the path once, in the user's terms): "permission denied", not "open
// /x: permission denied".
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// Describe names the kind of a file that is not regular.
func Describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}
