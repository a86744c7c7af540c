package collect

import "github.com/ovg-project/ci-report/internal/safefile"

// Files of a tree are opened through safefile, so that nothing in it can make
// a reader hang or read outside the part: a FIFO, a device or a socket named
// summary.json would block the open or the read forever, and a symbolic link
// could make a part report another part's, or any, file. The files of a part
// (and of perf/) are opened through an os.Root of their directory
// (safefile.OpenIn), which refuses a symbolic link that leaves it.

// fileError is a failure to read the file at Path; Err says what was wrong,
// a *fieldError where a field was at fault (problemOf finds it).
type fileError = safefile.Error

// errNotRegular is the refusal of anything but a regular file.
var errNotRegular = safefile.ErrNotRegular
