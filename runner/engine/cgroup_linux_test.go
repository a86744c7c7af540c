package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// fakeProc writes a /proc of a container's server: pid 100 (process group
// 1 inside the container, 90 on the host) listens on 127.0.0.1:18000,
// 101 is its worker, 102 a zombie of the container, 200 a process outside
// it; the files are those the kernel writes (proc(5)).
func fakeProc(t *testing.T) (root, cg string) {
	t.Helper()
	root, cg = t.TempDir(), "0::/system.slice/docker-abc.scope\n"
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("net/tcp", "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"+
		"   0: 0100007F:4650 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0000000000000000 100 0 0 10 0\n")
	for _, p := range []struct{ pid, stat, status, cgroup string }{
		{"100", "100 (python3) S 50 90 90", "NSpid:\t100\t1\nNSpgid:\t90\t1\n", cg},
		{"101", "101 (python3) S 100 90 90", "NSpid:\t101\t7\nNSpgid:\t90\t1\n", cg},
		{"102", "102 (gcc) Z 100 90 90", "NSpid:\t102\t9\nNSpgid:\t90\t1\n", cg},
		{"200", "200 (nvidia-smi) S 1 200 200", "NSpid:\t200\nNSpgid:\t200\n", "0::/user.slice/user-1000.slice/session-3.scope\n"},
	} {
		write(p.pid+"/stat", p.stat+" 0 0 -1 4194560\n")
		write(p.pid+"/status", "Name:\tx\n"+p.status)
		write(p.pid+"/cgroup", p.cgroup)
		if err := os.MkdirAll(filepath.Join(root, p.pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("socket:[555]", filepath.Join(root, "100", "fd", "3")); err != nil {
		t.Fatal(err)
	}
	return root, cg
}

// TestListenerCgroup: the server's cgroup is the listener's on its port
// when the listener is of the group (or is the pid) the exec prefix's
// wrapper reported, as NSpgid's (NSpid's) innermost id says; a listener
// of another group (a process that took the port) gives none.
func TestListenerCgroup(t *testing.T) {
	root, cg := fakeProc(t)
	for _, tc := range []struct {
		g    remoteGroup
		port int
		want string
	}{
		{remoteGroup{ID: 1, Group: true}, 18000, cg},
		{remoteGroup{ID: 1}, 18000, cg},
		{remoteGroup{ID: 5, Group: true}, 18000, ""},
		{remoteGroup{ID: 90, Group: true}, 18000, ""}, // the host's group id is not the wrapper's
		{remoteGroup{ID: 1, Group: true}, 18001, ""},
	} {
		if got := listenerCgroup(root, tc.port, tc.g); got != tc.want {
			t.Errorf("listenerCgroup(%d, %v) = %q, want %q", tc.port, tc.g, got, tc.want)
		}
	}
	if got := inCgroups(root, map[string]bool{cg: true}); !slices.Equal(got, []int{100, 101}) {
		t.Errorf("inCgroups = %v, want the container's live processes 100 and 101", got)
	}
}

// TestCgroupRealProcesses: a child is born into this process's cgroup
// (cgroup-v2.rst), so InCgroups of that cgroup lists both.
func TestCgroupRealProcesses(t *testing.T) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip("no /proc/self/cgroup:", err)
	}
	if got := Cgroup(os.Getpid()); got != string(self) {
		t.Fatalf("Cgroup(self) = %q, want %q", got, self)
	}
	c := exec.Command("sleep", "60")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	if got := Cgroup(c.Process.Pid); got != string(self) {
		t.Errorf("the child's cgroup %q, want its parent's %q", got, self)
	}
	got := InCgroups(map[string]bool{string(self): true})
	if !slices.Contains(got, os.Getpid()) || !slices.Contains(got, c.Process.Pid) {
		t.Errorf("InCgroups = %v, want %d and its child %d", got, os.Getpid(), c.Process.Pid)
	}
	if Cgroup(1<<30) != "" {
		t.Error("a pid that does not exist has a cgroup")
	}
}

// TestPortOwnerBehindPrefix: behind an exec prefix a port's holder is the
// case's when it is of the group the wrapper reported (by its innermost
// NSpgid, not the host's) or in a cgroup the run learned as its
// container's; a process outside both is foreign (also one of /proc's own
// PID namespace with the wrapper's id), a socket no process is seen
// holding is unknown. Issue 29: behind a prefix nothing was measured,
// and against the host's process groups alone every such holder is foreign.
func TestPortOwnerBehindPrefix(t *testing.T) {
	root, cg := fakeProc(t)
	// 103: the container's, group 12 inside it, listening on 18002; 200,
	// outside it, on 18003; nobody seen on 18004's socket; 1, the host's
	// init (group 1 as the wrapper's inside), on 18006 (socket activation).
	files := map[string]string{
		"1/stat":     "1 (systemd) S 0 1 1 0 0 -1 4194560\n",
		"1/status":   "Name:\tsystemd\nNSpid:\t1\nNSpgid:\t1\n",
		"1/cgroup":   "0::/init.scope\n",
		"103/stat":   "103 (python3) S 1 95 95 0 0 -1 4194560\n",
		"103/status": "Name:\tx\nNSpid:\t103\t12\nNSpgid:\t95\t12\n",
		"103/cgroup": cg,
		"net/tcp": "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
			"   0: 0100007F:4650 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0000000000000000 100 0 0 10 0\n" +
			"   1: 00000000:4652 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 556 1 0000000000000000 100 0 0 10 0\n" +
			"   2: 0100007F:4653 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 557 1 0000000000000000 100 0 0 10 0\n" +
			"   3: 0100007F:4654 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 558 1 0000000000000000 100 0 0 10 0\n" +
			"   4: 0100007F:4656 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 559 1 0000000000000000 100 0 0 10 0\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name), "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pid, sock := range map[string]string{"103": "socket:[556]", "200": "socket:[557]", "1": "socket:[559]"} {
		if err := os.Symlink(sock, filepath.Join(root, pid, "fd", "3")); err != nil {
			t.Fatal(err)
		}
	}
	wrapper, ours := []remoteGroup{{ID: 1, Group: true}}, map[string]bool{cg: true}
	for _, tc := range []struct {
		why     string
		port    int
		groups  []remoteGroup
		cgroups map[string]bool
		want    string
	}{
		{"a process of the wrapper's group", 18000, wrapper, nil, HeldByCase},
		{"the wrapper's pid", 18000, []remoteGroup{{ID: 1}}, nil, HeldByCase},
		{"neither: the host's groups alone", 18000, nil, nil, HeldForeign},
		{"the host's group id, not the wrapper's", 18000, []remoteGroup{{ID: 90, Group: true}}, nil, HeldForeign},
		{"the container's cgroup, another group", 18002, wrapper, ours, HeldByCase},
		{"another group, no cgroup learned", 18002, wrapper, nil, HeldForeign},
		{"a process outside the container", 18003, wrapper, ours, HeldForeign},
		{"the host's process of the wrapper's id", 18006, wrapper, ours, HeldForeign},
		{"a holder that cannot be seen", 18004, wrapper, ours, ""},
		{"nothing listening", 18005, wrapper, ours, ""},
	} {
		if got := portOwner(root, tc.port, nil, tc.groups, tc.cgroups, 0); got != tc.want {
			t.Errorf("%s: portOwner(%d, %v, %v) = %q, want %q", tc.why, tc.port, tc.groups, tc.cgroups, got, tc.want)
		}
	}
}
