package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/text"
)

// portHolders returns the processes outside process group pgid (0: every
// process) that hold a listening socket reached by a connection to
// 127.0.0.1:port, and how many such sockets there are. It reads the LISTEN
// sockets of /proc/net/tcp and tcp6 (their inodes) and the socket links of
// /proc/<pid>/fd: the group's own processes first, every process only for
// the sockets they do not hold. A socket whose holder cannot be seen (another
// user's process) is a holder with pid 0. err says that the socket tables
// could not be read, so that nothing could be told.
func portHolders(port, pgid int) (holders []portHolder, listeners int, err error) {
	inodes, err := listenInodes(procFS, port)
	if err != nil || len(inodes) == 0 {
		return nil, 0, err
	}
	left := map[uint64]bool{}
	for _, in := range inodes {
		left[in] = true
	}
	if pgid > 0 {
		eachProc(procFS, func(pid int, state byte, _, pgrp int) bool {
			if pgrp == pgid && state != 'Z' && state != 'X' {
				for _, in := range socketInodes(procFS, pid) {
					delete(left, in)
				}
			}
			return true
		})
	}
	if len(left) == 0 {
		return nil, len(inodes), nil
	}
	owner := map[uint64]int{}
	eachProc(procFS, func(pid int, state byte, _, pgrp int) bool {
		if pgid <= 0 || pgrp != pgid {
			for _, in := range socketInodes(procFS, pid) {
				if left[in] && owner[in] == 0 {
					owner[in] = pid
				}
			}
		}
		return true
	})
	seen := map[int]bool{}
	for _, in := range inodes {
		if !left[in] || seen[owner[in]] {
			continue
		}
		seen[owner[in]] = true
		h := portHolder{PID: owner[in]}
		if h.PID > 0 {
			h.Cmd = procCmdline(h.PID)
		}
		holders = append(holders, h)
	}
	return holders, len(inodes), nil
}

// PortOwner says whose the listening sockets that a connection to
// 127.0.0.1:port reaches are: HeldForeign when a process outside the case
// holds one, HeldByCase when only the case's do, "" when nothing listens
// there, the socket tables cannot be read, or a holder cannot be seen
// (another user's process) and none is foreign. A holder is the case's
// when Whose says so against the process groups of servers, the case's
// started servers; when it descends from runner (the runner's pid, 0 none),
// a process the run started, however it left its group and session (the
// runner is a child subreaper, Subreap, so an orphan of its tree stays in
// it; runner itself is not one it started); or, behind an exec prefix, when
// it is of a group (or is the pid) a server's wrapper reported, in a PID
// namespace below /proc's (remoteGroup.has), or its cgroup is one of
// cgroups, those the run learned as its containers' (the runner's case
// watch; cgroup-v2.rst, see Cgroup). The tables are those of the runner's
// network namespace: a container with one of its own has its listeners
// elsewhere, so unknown.
func PortOwner(port int, servers []*Server, cgroups map[string]bool, runner int) string {
	var pgids []int
	var groups []remoteGroup
	for _, s := range servers {
		pgids = append(pgids, s.pgid)
		if g, ok := s.remoteGroup(0); ok {
			groups = append(groups, g)
		}
	}
	return portOwner(procFS, port, pgids, groups, cgroups, runner)
}

// portOwner is PortOwner on the /proc at root (Whose and Under read /proc
// themselves).
func portOwner(root string, port int, pgids []int, groups []remoteGroup, cgroups map[string]bool, runner int) string {
	inodes, err := listenInodes(root, port)
	if err != nil || len(inodes) == 0 {
		return ""
	}
	ours := func(pid int) bool {
		// One of /proc's own namespace with a wrapper's id is another
		// process (NSpid has a field per namespace, proc(5)).
		inPrefix := false
		if len(groups) > 0 {
			_, levels := nsLast(root, pid, "NSpid:")
			inPrefix = levels > 1 && slices.ContainsFunc(groups, func(g remoteGroup) bool { return g.has(root, pid) })
		}
		return inPrefix || cgroups[cgroupOf(root, pid)] || Whose(pid, pgids) == HeldByCase ||
			(runner > 0 && pid != runner && Under(pid, runner) == HeldByCase)
	}
	seen, foreign := map[uint64]bool{}, false
	eachProc(root, func(pid int, state byte, _, _ int) bool {
		for _, in := range socketInodes(root, pid) {
			if slices.Contains(inodes, in) && state != 'Z' {
				seen[in] = true
				foreign = foreign || !ours(pid)
			}
		}
		return !foreign
	})
	switch {
	case foreign:
		return HeldForeign
	case len(seen) == len(inodes):
		return HeldByCase
	}
	return ""
}

// listenInodes returns, sorted, the inodes of the LISTEN sockets on port
// whose local address a connection to 127.0.0.1 reaches: 127.0.0.1, 0.0.0.0,
// :: (dual-stack, or not: /proc does not say) and ::ffff:127.0.0.1.
func listenInodes(root string, port int) ([]uint64, error) {
	var out []uint64
	read := 0
	for _, file := range []string{root + "/net/tcp", root + "/net/tcp6"} {
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6 on this machine
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		read++
		for line := range bytes.Lines(data) {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(string(line))
			if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			ip, p, ok := parseProcAddr(f[1])
			if !ok || p != port || !(ip.IsUnspecified() || ip.Equal(net.IPv4(127, 0, 0, 1))) {
				continue
			}
			if in, err := strconv.ParseUint(f[9], 10, 64); err == nil && in > 0 {
				out = append(out, in)
			}
		}
	}
	if read == 0 {
		return nil, errors.New("read " + root + "/net/tcp: not found")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseProcAddr parses /proc/net/tcp's `ADDR:PORT`: the address as the
// kernel's 32-bit words in this machine's byte order, printed in hex, the
// port in hex.
func parseProcAddr(s string) (net.IP, int, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok || (len(a) != 8 && len(a) != 32) {
		return nil, 0, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	raw, err2 := hex.DecodeString(a)
	if err != nil || err2 != nil {
		return nil, 0, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return ip, int(port), true
}

// socketInodes returns the inodes of the sockets pid has open (none when its
// fd directory cannot be read: another user's process, or gone).
func socketInodes(root string, pid int) []uint64 {
	dir := root + "/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []uint64
	for _, e := range entries {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(link, "socket:["); ok {
			if in, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				out = append(out, in)
			}
		}
	}
	return out
}

// procCmdline is pid's command line as one line (its name when the command
// line is empty, as for a kernel thread), at most 120 code points.
func procCmdline(pid int) string {
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	s := text.Words(strings.ReplaceAll(string(data), "\x00", " "))
	if s == "" {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		s = strings.TrimSpace(string(comm))
	}
	return text.Cut(s, 120)
}
