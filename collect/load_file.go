package collect

import "github.com/ovg-project/ci-report/internal/safefile"

// Files of a tree are opened through safefile (safefile.OpenIn for a part's
// directory), so that nothing in it can make a reader hang (a FIFO named
// summary.json) or read outside the part (a symbolic link).

// fileError is a failure to read the file at Path; Err says what was wrong,
// a *fieldError where a field was at fault (problemOf finds it).
type fileError = safefile.Error

// errNotRegular is the refusal of anything but a regular file.
var errNotRegular = safefile.ErrNotRegular
