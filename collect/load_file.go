package collect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Files of a tree are opened so that nothing in it can make a reader hang or
// read outside the part: a FIFO, a device or a socket named summary.json
// would block the open or the read forever (a FIFO without a writer blocks
// open(2) itself), and a symbolic link could make a part report another
// part's, or any, file.
//
// So a file is opened with O_NONBLOCK, which makes open(2) return at once
// whatever the file is and changes nothing for a regular file, and then the
// opened handle is checked with fstat(2): the check is of the file that
// will be read, with no window in which another can be swapped in. The files
// of a part (and of perf/) are opened through an os.Root of their
// directory, which refuses a symbolic link that leaves it.

// errNotRegular is the refusal of anything but a regular file.
var errNotRegular = errors.New("not a regular file")

// errEscapes is the refusal of a symbolic link that leaves its directory.
var errEscapes = errors.New("a symbolic link that leaves its part directory, not followed")

// OpenRegular opens the file at path for reading, refusing anything but a
// regular file (a FIFO would block the read, or the open, forever). A file
// that does not exist gives an error satisfying errors.Is(err,
// fs.ErrNotExist). Every reader of run input opens files through it.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	return checkRegular(f, path)
}

// openIn opens name in the directory root (whose path is dir) for reading,
// refusing anything but a regular file and a symbolic link that leaves dir.
func openIn(root *os.Root, dir, name string) (*os.File, error) {
	path := filepath.Join(dir, name)
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// os.Root's error for a link out of the root has no exported
		// sentinel; Lstat tells the reader what the file is.
		if fi, lerr := root.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &fileError{path, errEscapes}
		}
		return nil, &fileError{path, err}
	}
	return checkRegular(f, path)
}

// checkRegular returns f when fstat says it is a regular file, else closes
// it and says what it is.
func checkRegular(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fileError{path, err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fileError{path, fmt.Errorf("%w (%s), not read", errNotRegular, fileKind(fi.Mode()))}
	}
	return f, nil
}

// fileKind names the kind of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
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
	}
	return "mode " + m.String()
}
