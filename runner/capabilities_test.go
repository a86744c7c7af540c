package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/runner/internal/ledger"
)

// exitErr runs `sh -c 'exit <code>'` for a real *exec.ExitError.
func exitErr(t *testing.T, code int) error {
	t.Helper()
	err := exec.Command("sh", "-c", fmt.Sprintf("exit %d", code)).Run()
	if err == nil {
		t.Fatalf("exit %d succeeded", code)
	}
	return err
}

// TestClassifyPriorityHelp: only exit 0 and argparse's exit 2 with
// `invalid choice` are answers; anything else leaves the capability
// unknown (an error), so the cases that need it run.
func TestClassifyPriorityHelp(t *testing.T) {
	argparse := "kvctl: error: argument command: invalid choice: 'priority' (choose from 'list', 'limit')"
	for _, c := range []struct {
		name      string
		err       error
		available bool
		unknown   bool
	}{
		{"exit 0", nil, true, false},
		{"argparse", fmt.Errorf("%w: %s", exitErr(t, 2), argparse), false, false},
		{"argparse through a fake exec", errors.New("exit status 2: " + argparse), false, false},
		{"exit 2, other usage error", fmt.Errorf("%w: kvctl: error: unrecognized arguments", exitErr(t, 2)), false, true},
		{"invalid choice, exit 1", fmt.Errorf("%w: %s", exitErr(t, 1), argparse), false, true},
		{"kvctl missing", errors.New(`exec: "kvctl": executable file not found in $PATH`), false, true},
	} {
		cp, err := classifyPriorityHelp(c.err)
		if (err != nil) != c.unknown || (err == nil && cp.Available != c.available) {
			t.Errorf("%s: %+v, %v; want available %v, unknown %v", c.name, cp, err, c.available, c.unknown)
		}
	}
}

// TestMissingLedgerFields: a pair is skipped only when its listed segments
// (groups `<ipc>_g<N>` included) carry none of a priority field; foreign
// segments do not count, and nothing listed is not evidence.
func TestMissingLedgerFields(t *testing.T) {
	released := func(ipc string) ledger.Entry {
		return ledger.Entry{IPC: ipc, Fields: map[string]int64{ledger.FieldLimit: 1, ledger.FieldUsed: 1}}
	}
	full := func(ipc string) ledger.Entry {
		e := released(ipc)
		e.Fields[ledger.FieldPriority], e.Fields[ledger.FieldShortfall], e.Fields[ledger.FieldWatermark] = 0, 0, 0
		return e
	}
	ipcs := []string{"e2e_1_l", "e2e_1_h"}
	for _, c := range []struct {
		name    string
		entries []ledger.Entry
		want    string
	}{
		{"released kvctl", []ledger.Entry{released("e2e_1_l"), released("e2e_1_h")},
			"kvctl list --json has no priority, shortfall_bytes or watermark_bytes field (kvcached 0.1.5)"},
		{"priority support", []ledger.Entry{full("e2e_1_l"), full("e2e_1_h")}, ""},
		{"a group segment carries them", []ledger.Entry{released("e2e_1_l"), full("e2e_1_h_g1")}, ""},
		{"a foreign segment does not count", []ledger.Entry{released("e2e_1_l"), full("other")},
			"kvctl list --json has no priority, shortfall_bytes or watermark_bytes field (kvcached 0.1.5)"},
		{"nothing of ours listed", []ledger.Entry{full("other")}, ""},
	} {
		if got := missingLedgerFields(c.entries, ipcs, "0.1.5"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	one := released("e2e_1_l")
	one.Fields[ledger.FieldPriority], one.Fields[ledger.FieldShortfall] = 0, 0
	if got, want := missingLedgerFields([]ledger.Entry{one}, ipcs, ""), "kvctl list --json has no watermark_bytes field (kvcached unknown)"; got != want {
		t.Errorf("one field missing: %q, want %q", got, want)
	}
}

// TestCapabilityProbedAvailable: against the simulated kvcached with
// priority support, the setup case of a plan with a priority pair probes
// kvctl's priority command, finds it, logs it and records it in setup.json,
// and the pair runs (a stand-in kind here); a plan without one probes
// nothing.
func TestCapabilityProbedAvailable(t *testing.T) {
	t.Parallel()
	ran := false
	stub := map[string]Kind{KindPriority: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
		ran = true
		return c.Result(nil, nil, nil)
	})}
	out, run := runSim(t, simOpts{profile: "weekly", cases: "priority-*", kinds: stub})
	if !ran {
		t.Fatalf("the priority pair was not run: %+v", out.Cases)
	}
	var log struct {
		Capabilities map[string]struct {
			Available bool   `json:"available"`
			Detail    string `json:"detail"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(out.Cases[0].Log, &log); err != nil || out.Cases[0].Name != "vllm-setup" {
		t.Fatalf("setup case %s log %s (%v)", out.Cases[0].Name, out.Cases[0].Log, err)
	}
	if cp := log.Capabilities[CapKvctlPriority]; !cp.Available || cp.Detail != "kvctl priority --help exited 0" {
		t.Errorf("setup log capabilities: %s", out.Cases[0].Log)
	}
	var setup collect.Setup
	data, _ := os.ReadFile(filepath.Join(run.outDir, "setup.json"))
	if err := json.Unmarshal(data, &setup); err != nil {
		t.Fatal(err)
	}
	if e, _ := setup.Engines.Get("vllm"); !slices.Equal(e.Capabilities, []collect.Capability{{Name: CapKvctlPriority, Available: true, Detail: "kvctl priority --help exited 0"}}) {
		t.Errorf("setup.json capabilities %+v", e.Capabilities)
	}

	out, _ = runSim(t, simOpts{profile: "smoke", cases: "vllm-*", kinds: map[string]Kind{KindServer: Kind(func(ctx context.Context, c *Case) collect.CaseResult {
		return c.Result(nil, nil, nil)
	})}})
	if strings.Contains(string(out.Cases[0].Log), "capabilit") {
		t.Errorf("a plan without a priority pair probed capabilities: %s", out.Cases[0].Log)
	}
}

// TestCapabilityProbeKeepsEarlierAnswers: a probe that cannot tell leaves
// what an earlier probe of the same engine found (Runner.caps is merged
// into, never replaced). It fails where the probe replaces the engine's map.
func TestCapabilityProbeKeepsEarlierAnswers(t *testing.T) {
	earlier := collect.Capability{Name: CapKvctlPriority, Available: true, Detail: "kvctl priority --help exited 0"}
	r := &Runner{
		caps: map[string]map[string]collect.Capability{"vllm": {CapKvctlPriority: earlier}},
		Exec: func(ctx context.Context, argv []string) ([]byte, error) {
			return nil, errors.New("signal: killed")
		},
	}
	c := &Case{R: r}
	var log collect.Ordered[any]
	c.probeCapabilities(context.Background(), "vllm", []string{CapKvctlPriority}, &log)
	if got := r.caps["vllm"][CapKvctlPriority]; got != earlier {
		t.Errorf("after a probe that could not tell, vllm's answer is %+v, want the earlier %+v", got, earlier)
	}
	if _, ok := log.Get("capability_probe_error"); !ok {
		t.Errorf("the failed probe is not in the case log")
	}
}
