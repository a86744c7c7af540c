package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/runner/engine"
)

func TestBallastMiB(t *testing.T) {
	type tc struct{ total, want, got int64 }
	for _, c := range []tc{{81920, 24576, 57344}, {24576, 24576, 0}, {16384, 24576, 0}, {81920, 0, 0}} {
		if got := ballastMiB(c.total, c.want); got != c.got {
			t.Errorf("ballastMiB(%d, %d) = %d, want %d", c.total, c.want, got, c.got)
		}
	}
}

func TestStartBallast(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) []string { return writeScript(t, dir, name, body) }
	type tc struct {
		name    string
		argv    []string
		wantErr string
	}
	for _, c := range []tc{
		{name: "ready", argv: script("ready", `echo "leaving $2 MiB of GPU $4"; echo ballast ready; exec sleep 30`)},
		{name: "exits", argv: script("exits", `echo "CUDA out of memory" >&2; exit 1`), wantErr: `exited before it said "ballast ready"; log ends: CUDA out of memory`},
		{name: "silent", argv: script("silent", `exec sleep 30`), wantErr: `did not say "ballast ready" within 300ms`},
		{name: "none", wantErr: "no ballast command configured"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ballastConfig{
				Name: "elastic-ballast", Dir: filepath.Join(dir, c.name, "elastic-ballast"), Argv: c.argv,
				KeepMiB: 24576, GPU: 0, ReadyTimeout: 300 * time.Millisecond, Poll: 20 * time.Millisecond,
				Server: engine.ServerConfig{Timing: engine.Timing{StopTimeout: 2 * time.Second, StopPoll: 20 * time.Millisecond, KillWait: time.Second}},
			}
			srv, err := startBallast(context.Background(), cfg)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := srv.Stop()
			if !res.Exited || res.Killed {
				t.Errorf("stop: %+v", res)
			}
			log, _ := os.ReadFile(filepath.Join(cfg.Dir, "serve.log"))
			if !strings.Contains(string(log), "leaving 24576 MiB of GPU 0") {
				t.Errorf("serve.log = %q", log)
			}
			cmd, _ := os.ReadFile(filepath.Join(cfg.Dir, "cmd.txt"))
			if !strings.HasSuffix(strings.TrimSpace(string(cmd)), "--mib 24576 --gpu 0") {
				t.Errorf("cmd.txt = %q", cmd)
			}
		})
	}
}

// Two pairs of one kind share `<kind>-ballast`: the second start appends
// under its own header, and its readiness is judged on its own output only.
func TestBallastSharedDirKeepsEveryPairsLog(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) []string { return writeScript(t, dir, name, body) }
	bdir := filepath.Join(dir, "part", "elastic-ballast")
	type tc struct {
		pair    string
		argv    []string
		wantErr string
	}
	for _, c := range []tc{
		{pair: "elastic-x+y", argv: script("ready", `echo "first holds"; echo ballast ready; exec sleep 30`)},
		// Silent: the first pair's "ballast ready" above must not count.
		{pair: "elastic-z+w", argv: script("silent", `echo "second starts"; exec sleep 30`), wantErr: `did not say "ballast ready"`},
	} {
		cfg := ballastConfig{
			Name: "elastic-ballast", Pair: c.pair, Dir: bdir, Argv: c.argv, KeepMiB: 16384,
			ReadyTimeout: 300 * time.Millisecond, Poll: 20 * time.Millisecond,
			Server: engine.ServerConfig{Timing: engine.Timing{StopTimeout: 2 * time.Second, StopPoll: 20 * time.Millisecond, KillWait: time.Second}},
		}
		srv, err := startBallast(context.Background(), cfg)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("%s: err = %v, want containing %q", c.pair, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.pair, err)
		}
		srv.Stop()
	}
	log, _ := os.ReadFile(filepath.Join(bdir, "serve.log"))
	want := "=== elastic-x+y ===\nfirst holds\nballast ready\n=== elastic-z+w ===\nsecond starts\n"
	if string(log) != want {
		t.Errorf("serve.log\n got %q\nwant %q", log, want)
	}
	cmd, _ := os.ReadFile(filepath.Join(bdir, "cmd.txt"))
	if strings.Count(string(cmd), "--mib 16384 --gpu 0\n") != 2 || !strings.HasPrefix(string(cmd), "=== elastic-x+y ===\n") ||
		!strings.Contains(string(cmd), "=== elastic-z+w ===\n") {
		t.Errorf("cmd.txt = %q", cmd)
	}
}

// writeScript writes an executable shell script dir/name.sh running body
// and returns its argv.
func writeScript(t *testing.T, dir, name, body string) []string {
	t.Helper()
	p := filepath.Join(dir, name+".sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{p}
}
