package safefile

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// WriteError is a failure to write the file at Path: "write PATH: ERR".
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return "write " + bounds.Cut(e.Path) + ": " + e.Err.Error() }

func (e *WriteError) Unwrap() error { return e.Err }

// ErrNotWritable is the refusal to write a file of a kind that is neither
// replaced nor written through: a directory, a block device, a socket, a
// symbolic link to nothing, a named pipe without a reader.
var ErrNotWritable = errors.New("not written")

// Write writes data to path (see WriteFunc).
func Write(path string, data []byte) error {
	return WriteFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc writes what write streams to path, the one writer of every file
// ci-report makes, by the rules of docs/design.md §3: through a temporary
// file, so an error of write leaves the old file as it was; a new file by
// rename, 0644; an existing regular file keeping its owner, group, mode and
// hard links; a symbolic link followed; a character device or a named pipe
// with a reader written through, never replaced; anything else refused.
func WriteFunc(path string, write func(io.Writer) error) error {
	target, fi, err := resolve(path)
	switch {
	case err != nil:
	case fi == nil || fi.Mode().IsRegular():
		err = replace(target, fi, write)
	default:
		err = writeThrough(path, write)
	}
	if err != nil {
		return &WriteError{path, err}
	}
	return nil
}

// resolve says what path is to a writer: the path to replace and nil (a
// new file), the path to replace and its info (a regular file, or the one
// a symbolic link leads to), or the info of a file to write through.
func resolve(path string) (string, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, nil
	case err != nil:
		return "", nil, unwrapPath(err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return path, fi, checkWritable(fi)
	}
	fi, err = os.Stat(path)
	if err != nil {
		return "", nil, fmt.Errorf("%w: a symbolic link to a file that cannot be reached (%v)", ErrNotWritable, unwrapPath(err))
	}
	if err := checkWritable(fi); err != nil {
		return "", nil, err
	}
	if !fi.Mode().IsRegular() {
		return path, fi, nil // the kernel follows the link when the file is opened
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, fmt.Errorf("follow the symbolic link: %w", unwrapPath(err))
	}
	return target, fi, nil
}

// checkWritable refuses the kinds of file that are neither replaced nor
// written through.
func checkWritable(fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() || m&fs.ModeNamedPipe != 0 || m&fs.ModeCharDevice != 0 {
		return nil
	}
	return fmt.Errorf("%w: %s is neither replaced nor written through", ErrNotWritable, Describe(m))
}

// replace writes path through a temporary file in its directory: renamed
// over path when path is new (old nil) or the temporary file could be given
// old's owner and mode and old has no other name, else copied into path in
// place. The rename happens only while path is still a regular file or
// absent.
func replace(path string, old fs.FileInfo, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return unwrapPath(err)
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
	}()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	inPlace := false
	switch {
	case err != nil:
	case old == nil:
		// CreateTemp makes 0600 files; artifacts are read by other users (upload steps).
		err = f.Chmod(0o644)
	default:
		inPlace, err = takeOwnerAndMode(f, old)
	}
	if inPlace {
		err = copyInto(path, old, f)
	}
	err = cmp.Or(err, f.Close())
	if err != nil || inPlace {
		return unwrapPath(err)
	}
	// Something else may have been put at path since resolve looked.
	if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s appeared there while it was being written", ErrNotWritable, Describe(fi.Mode()))
	}
	if err := os.Rename(tmp, path); err != nil {
		return unwrapPath(err)
	}
	renamed = true
	return nil
}

// copyInto writes the content of tmp (the whole new file) into the regular
// file at path, in place, when it is still the file old: its inode, so its
// owner, mode and every link to it, stay.
func copyInto(path string, old fs.FileInfo, tmp *os.File) error {
	out, err := openWrite(path, os.O_WRONLY)
	if err != nil {
		return fmt.Errorf("%w: it cannot be written in place, which keeping its owner, mode and links needs (%v)", ErrNotWritable, unwrapPath(err))
	}
	fi, err := out.Stat()
	switch {
	case err != nil:
	case !os.SameFile(fi, old):
		err = fmt.Errorf("%w: another file was put there while it was being written", ErrNotWritable)
	default:
		if _, err = tmp.Seek(0, io.SeekStart); err == nil {
			err = out.Truncate(0)
		}
		if err == nil {
			_, err = io.Copy(out, tmp)
		}
		if err == nil {
			err = out.Sync()
		}
	}
	return cmp.Or(err, out.Close())
}

// writeThrough writes into the character device or named pipe at path,
// without truncating or replacing it.
func writeThrough(path string, write func(io.Writer) error) error {
	f, err := openWrite(path, os.O_WRONLY)
	if err != nil {
		return err
	}
	return unwrapPath(cmp.Or(write(f), f.Close()))
}

// OpenAppend opens path for appending, creating a regular file where there
// is none: a regular file, a character device or a named pipe with a reader
// (through a symbolic link or not) is appended to; anything else is
// refused. Nothing is ever replaced. Errors name the file.
func OpenAppend(path string) (*os.File, error) {
	f, err := openWrite(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, &WriteError{path, err}
	}
	return f, nil
}

// Create opens path for writing from its start, creating a regular file
// where there is none, by OpenAppend's rules: a named pipe with no reader is
// refused at once (opening it for writing would wait for a reader, deaf to
// signals), a directory or a socket refused, nothing replaced.
func Create(path string) (*os.File, error) {
	f, err := openWrite(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return nil, &WriteError{path, err}
	}
	return f, nil
}

// Append appends data to path (see OpenAppend).
func Append(path string, data []byte) error {
	f, err := OpenAppend(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = cmp.Or(err, f.Close()); err != nil {
		return &WriteError{path, unwrapPath(err)}
	}
	return nil
}

// openWrite opens path with flag, without blocking on a named pipe, and
// checks with fstat that it is a file that may be written.
func openWrite(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNonblock, 0o644)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%w: a named pipe with no reader", ErrNotWritable)
	}
	if err != nil {
		return nil, unwrapPath(err)
	}
	fi, err := f.Stat()
	if err == nil {
		err = checkWritable(fi)
	}
	if err != nil {
		f.Close()
		return nil, unwrapPath(err)
	}
	return f, nil
}

// RemoveRegular removes path when it is a regular file (a stale output); a
// path that is absent or anything else (a device, a link) is left as it is.
func RemoveRegular(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &WriteError{path, unwrapPath(err)}
	}
	return nil
}
