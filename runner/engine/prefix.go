package engine

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A server behind an exec prefix (`docker exec -i NAME`) is out of reach of
// the runner's process group, so it runs under prefixWrapper and is signalled
// through the prefix again (docs/runner.md §3.3.1).

// prefixMarker starts the wrapper's line, `ci-report-exec-prefix: pgid N` (or
// `pid N`), which stays in serve.log to say which group was stopped.
const prefixMarker = "ci-report-exec-prefix: "

// prefixWrapper runs "$@" as a process group leader (a `docker exec` process
// leads its own session already, as runc calls setsid; elsewhere setsid(1))
// and prints its group first: field 5 of /proc/<pid>/stat, read after the
// last ')' since the command name may hold spaces.
const prefixWrapper = `g() { echo "$3"; }
pg=
if read -r st 2>/dev/null </proc/$$/stat; then pg=$(g ${st##*) }); fi
if [ -n "$pg" ] && [ "$pg" != "$$" ] && command -v setsid >/dev/null 2>&1; then
	echo "` + prefixMarker + `pgid $$"
	exec setsid "$@"
fi
if [ "$pg" = "$$" ]; then echo "` + prefixMarker + `pgid $$"; else echo "` + prefixMarker + `pid $$"; fi
exec "$@"`

// remoteGroup is what the wrapper reported: a process group inside the
// prefix, or (group false) only the server's pid there.
type remoteGroup struct {
	ID    int
	Group bool
}

// target is the operand of kill: -pgid or pid.
func (g remoteGroup) target() string {
	if g.Group {
		return "-- -" + strconv.Itoa(g.ID)
	}
	return strconv.Itoa(g.ID)
}

func (g remoteGroup) String() string {
	if g.Group {
		return "process group " + strconv.Itoa(g.ID)
	}
	return "pid " + strconv.Itoa(g.ID)
}

// killScript sends sig to the group (or pid).
func (g remoteGroup) killScript(sig syscall.Signal) string {
	return "kill -s " + cmp.Or(signalWords[sig], strconv.Itoa(int(sig))) + " " + g.target()
}

// aliveScript prints alive when a non-zombie process of the group (or the
// pid) runs, else gone: a container whose init does not reap keeps zombies,
// which `kill -0` would count. Without /proc it falls back to kill -0.
func (g remoteGroup) aliveScript() string {
	files, match := "/proc/[0-9]*/stat", `[ "$3" = `+strconv.Itoa(g.ID)+` ]`
	if !g.Group {
		files, match = "/proc/"+strconv.Itoa(g.ID)+"/stat", "true"
	}
	return `if [ ! -r /proc/self/stat ]; then if kill -0 ` + g.target() + ` 2>/dev/null; then echo alive; else echo gone; fi; exit 0; fi
for f in ` + files + `; do
	read -r l 2>/dev/null <"$f" || continue
	set -- ${l##*) }
	if ` + match + ` && [ "$1" != Z ] && [ "$1" != X ]; then echo alive; exit 0; fi
done
echo gone`
}

// parsePrefixLine reads the wrapper's line.
func parsePrefixLine(line []byte) (remoteGroup, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(line)), prefixMarker)
	if !ok {
		return remoteGroup{}, false
	}
	kind, num, _ := strings.Cut(rest, " ")
	id, err := strconv.Atoi(num)
	if err != nil || id <= 0 || (kind != "pgid" && kind != "pid") {
		return remoteGroup{}, false
	}
	return remoteGroup{ID: id, Group: kind == "pgid"}, true
}

// scanPrefixLine copies the server's first output to w line by line until
// the wrapper's line (recorded in s.remote), the end or 64 KiB (the prefix
// itself may print before the line), and returns the reader of the rest.
func (s *Server) scanPrefixLine(r io.Reader, w io.Writer) io.Reader {
	defer close(s.remoteKnown) // launch calls this once
	br := bufio.NewReaderSize(r, 4096)
	for n := 0; n < 64<<10; {
		line, err := br.ReadSlice('\n')
		n += len(line)
		g, found := parsePrefixLine(line)
		if found {
			s.remote = g
		}
		w.Write(line)
		if found || (err != nil && err != bufio.ErrBufferFull) {
			break
		}
	}
	return br
}

// remoteGroup returns the group the wrapper reported, waiting up to wait for
// its line; false without an exec prefix or a line.
func (s *Server) remoteGroup(wait time.Duration) (remoteGroup, bool) {
	if len(s.Config.ExecPrefix) == 0 {
		return remoteGroup{}, false
	}
	if wait > 0 {
		select {
		case <-s.remoteKnown:
		case <-time.After(wait):
		}
	}
	select {
	case <-s.remoteKnown:
		return s.remote, s.remote.ID > 0
	default:
		return remoteGroup{}, false
	}
}

// inPrefix runs script with sh through the exec prefix, for at most 10 s.
func (s *Server) inPrefix(script string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	argv := append(slices.Clone(s.Config.ExecPrefix), "sh", "-c", script)
	out, err := s.Config.Exec(ctx, argv)
	if err != nil {
		return out, fmt.Errorf("%s: %w", strings.Join(argv[:len(argv)-1], " ")+" "+ShellQuote(script), err)
	}
	return out, nil
}
