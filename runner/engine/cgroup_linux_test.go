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
