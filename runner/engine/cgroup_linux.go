package engine

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// A container's processes are no descendants of the runner that starts
// them through `docker exec`, but they share the container's cgroup: the
// kernel's Documentation/admin-guide/cgroup-v2.rst ("Processes": "When a
// process forks a child process, the new process is born into the cgroup
// that the forking process belongs to"; "/proc/$PID/cgroup lists a
// process's cgroup membership ... The entry for cgroup v2 is always in the
// format 0::$PATH", a line per hierarchy under v1), and runc puts an exec'd
// process into the container's cgroup before it runs (runc
// libcontainer/process_linux.go, setnsProcess.start).

// Cgroup is pid's cgroup membership, its /proc/<pid>/cgroup as it reads;
// "" when that cannot be read (gone, no /proc).
func Cgroup(pid int) string { return cgroupOf(procFS, pid) }

func cgroupOf(root string, pid int) string {
	b, err := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	return string(b)
}

// InCgroups lists, sorted, the live processes whose Cgroup is one of cgs.
func InCgroups(cgs map[string]bool) []int { return inCgroups(procFS, cgs) }

func inCgroups(root string, cgs map[string]bool) []int {
	var out []int
	if len(cgs) > 0 {
		eachProc(root, func(pid int, state byte, _, _ int) bool {
			if state != 'Z' && state != 'X' && cgs[cgroupOf(root, pid)] {
				out = append(out, pid)
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

// Cgroup is the cgroup of a server behind an exec prefix: that of a process
// that listens on its port and is of the process group (or is the pid) the
// prefix wrapper reported (remoteGroup.has), so that a process that took
// the port is never taken for the server's.
// "" when none is (yet): no prefix, no wrapper line, nothing listening.
func (s *Server) Cgroup() string {
	g, ok := s.remoteGroup(0)
	if !ok {
		return ""
	}
	return listenerCgroup(procFS, s.Config.Port, g)
}

func listenerCgroup(root string, port int, g remoteGroup) string {
	inodes, err := listenInodes(root, port)
	if err != nil || len(inodes) == 0 {
		return ""
	}
	cg := ""
	eachProc(root, func(pid int, state byte, _, _ int) bool {
		listens := slices.ContainsFunc(socketInodes(root, pid), func(in uint64) bool { return slices.Contains(inodes, in) })
		if listens && state != 'Z' && g.has(root, pid) {
			cg = cgroupOf(root, pid)
		}
		return cg == ""
	})
	return cg
}

// has says pid is of the group (or is the pid) g, as the last field of
// NSpgid (NSpid) in /proc/<pid>/status says: its id in the innermost PID
// namespace (proc(5)).
func (g remoteGroup) has(root string, pid int) bool {
	key := "NSpid:"
	if g.Group {
		key = "NSpgid:"
	}
	id, _ := nsLast(root, pid, key)
	return id == g.ID
}

// nsLast is the last field of /proc/<pid>/status's line key, 0 none, and
// how many fields it has: one per PID namespace from that of /proc down to
// pid's (proc(5)).
func nsLast(root string, pid int, key string) (id, levels int) {
	b, _ := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(v); len(f) > 0 {
				id, _ = strconv.Atoi(f[len(f)-1])
				return id, len(f)
			}
		}
	}
	return 0, 0
}
