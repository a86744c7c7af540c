package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

var sizeSuffixes = []struct {
	suffix string
	mul    float64
}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1}}

// parseSize reads a size as the real kvctl does: bytes, or a number with a
// k/m/g(b) suffix ("512M", "1.5g"), commas and underscores ignored.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.NewReplacer(",", "", "_", "").Replace(t)
	mul := 1.0
	for _, suf := range sizeSuffixes {
		if strings.HasSuffix(t, suf.suffix) {
			t, mul = strings.TrimSuffix(t, suf.suffix), suf.mul
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f >= 0 && f*mul <= 1<<62) { // written so that NaN fails
		return 0, fmt.Errorf("invalid size string '%s'", s)
	}
	return int64(f * mul), nil
}

// ParseKvctlDelay reads CI_REPORT_SIM_KVCTL_DELAY, each simulated kvctl
// call's delay at time scale 1: a Go duration from 0 to 1h ("" means 0).
func ParseKvctlDelay(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 || d > time.Hour {
		return 0, fmt.Errorf("CI_REPORT_SIM_KVCTL_DELAY=%q: want a Go duration from 0 to 1h, such as 3s", s)
	}
	return d, nil
}

// The kvcached builds CI_REPORT_SIM_KVCACHED picks: "" is the simulated
// kvcached with the priority protocol; KvcachedNoPriority is released
// kvcached 0.1.5 (and main e8e640638ba7), whose kvctl has no `priority`
// subcommand and lists only ipc, limit_bytes and used_bytes.
const KvcachedNoPriority = "no-priority"

// ValidateKvcached checks a CI_REPORT_SIM_KVCACHED value, as ValidateFaults
// does CI_REPORT_SIM_FAULTS, so that a typo is a usage error of `run
// --simulate` rather than a kvctl that refuses every call.
func ValidateKvcached(v string) error {
	if v != "" && v != KvcachedNoPriority {
		return fmt.Errorf("%q: want %s, or nothing for the kvcached with priority support", v, KvcachedNoPriority)
	}
	return nil
}

// kvctlCommands are the subcommands of kvcached's kvctl, in the order its
// argparse adds them (kvcached/cli/kvctl.py@2513db15eee5 (v0.1.5) l.420-458,
// unchanged to @e8e640638ba7); the simulator implements list and limit.
var kvctlCommands = []string{"list", "limit", "limit-percent", "watch", "kvtop", "delete", "shell"}

func kvctlUsage(cmds []string) string {
	return "usage: kvctl [-h] {" + strings.Join(cmds, ",") + "} ..."
}

// runKvctl is `sim kvctl list --json | limit <ipc> <size> | priority <ipc>
// <p>` (priority not with CI_REPORT_SIM_KVCACHED=no-priority). Each call
// first waits CI_REPORT_SIM_KVCTL_DELAY: the real kvctl imports torch before
// it parses its arguments or touches the ledger (kvcached/__init__.py@e8e6406
// l.13-15, imported by kvcached/cli/kvctl.py), so a listing shows the ledger
// at the end of the call.
func runKvctl(ctx context.Context, dir string, getenv func(string) string, args []string, stdout, stderr io.Writer) int {
	scale, err := ParseTimescale(getenv("CI_REPORT_SIM_TIMESCALE"))
	d, derr := ParseKvctlDelay(getenv("CI_REPORT_SIM_KVCTL_DELAY"))
	if err = cmp.Or(err, derr); err != nil {
		return fail(stderr, 2, "kvctl:", err)
	}
	d = scaled(d, scale, 0)
	if _, stopped := sleepUnless(d, ctx.Done()); d > 0 && stopped { // without a delay, never interrupted
		return fail(stderr, 130, "kvctl: interrupted")
	}
	build := getenv("CI_REPORT_SIM_KVCACHED")
	if err := ValidateKvcached(build); err != nil {
		return fail(stderr, 2, "kvctl: CI_REPORT_SIM_KVCACHED:", err)
	}
	cli := kvctlCLI{cmds: kvctlCommands, plain: build == KvcachedNoPriority, getenv: getenv, scale: scale, stdout: stdout, stderr: stderr}
	if !cli.plain {
		cli.cmds = append(slices.Clone(kvctlCommands), "priority")
	}
	return cli.command(ctx, dir, args)
}

// kvctlCLI is one simulated kvctl call: its subcommands, whether its list
// is released kvcached's (plain), the environment and the output streams.
type kvctlCLI struct {
	cmds           []string
	plain          bool
	getenv         func(string) string
	scale          float64
	stdout, stderr io.Writer
}

// usage is argparse's usage error: the usage line, `kvctl: error: msg`, exit 2.
func (cli kvctlCLI) usage(msg string) int {
	fmt.Fprintln(cli.stderr, kvctlUsage(cli.cmds))
	if msg != "" {
		fmt.Fprintln(cli.stderr, "kvctl: error:", msg)
	}
	return 2
}

// command answers first what argparse answers before any subcommand runs,
// then runs the subcommand in the world in dir.
func (cli kvctlCLI) command(ctx context.Context, dir string, args []string) int {
	switch {
	case len(args) == 0: // the real kvctl starts its interactive shell
		return cli.usage("")
	case args[0] == "-h" || args[0] == "--help":
		fmt.Fprintln(cli.stdout, kvctlUsage(cli.cmds))
		fmt.Fprintln(cli.stdout, "\nKVCached control utility")
		return 0
	case !slices.Contains(cli.cmds, args[0]):
		// argparse's wording since Python 3.9 (the choices quoted as repr).
		return cli.usage(fmt.Sprintf("argument command: invalid choice: '%s' (choose from '%s')", args[0], strings.Join(cli.cmds, "', '")))
	case len(args) > 1 && (args[1] == "-h" || args[1] == "--help"): // a capability probe
		fmt.Fprintf(cli.stdout, "usage: kvctl %s [-h] ...\n", args[0])
		return 0
	}
	w, err := openWorld(dir)
	if err != nil {
		return fail(cli.stderr, 1, "kvctl:", err)
	}
	defer w.lock.Close()
	switch args[0] {
	case "list":
		jsonOut := false
		var only []string
		for _, a := range args[1:] {
			switch {
			case a == "--json":
				jsonOut = true
			case strings.HasPrefix(a, "-"):
				return cli.usage("unrecognized arguments: " + a)
			default:
				only = append(only, a)
			}
		}
		return kvctlList(w, only, jsonOut, cli.plain, cli.stdout, cli.stderr)
	case "limit":
		if len(args) != 3 {
			return cli.usage("limit takes <ipc> <size>")
		}
		return kvctlLimit(w, args[1], args[2], cli.stderr)
	case "priority":
		if len(args) != 3 {
			return cli.usage("priority takes <ipc> <priority>")
		}
		p, err := strconv.Atoi(args[2])
		if err != nil {
			return cli.usage(fmt.Sprintf("argument priority: invalid int value: '%s'", args[2]))
		}
		faults, err := parseFaults(cli.getenv("CI_REPORT_SIM_FAULTS"))
		if err != nil {
			return fail(cli.stderr, 2, "kvctl: CI_REPORT_SIM_FAULTS:", err)
		}
		return kvctlPriority(ctx, w, args[1], p, faults, cli.scale, cli.stdout, cli.stderr)
	}
	return cli.usage(fmt.Sprintf("ci-report sim kvctl does not simulate %q", args[0]))
}

// kvctlList is `list [--json] [ipc...]`. plain lists what released
// kvcached's `list --json` prints: ipc, limit_bytes and used_bytes only
// (cmd_list, kvcached/cli/kvctl.py@2513db15eee5 l.209-229).
func kvctlList(w *world, only []string, jsonOut, plain bool, stdout, stderr io.Writer) int {
	segs, errs := w.segments()
	for _, e := range errs {
		fmt.Fprintln(stderr, "kvctl: warning:", e)
	}
	res := []kvctlEntry{}
	for _, s := range segs {
		if len(only) > 0 && !slices.Contains(only, s.IPC) {
			continue
		}
		res = append(res, s.kvctlEntry)
	}
	if jsonOut {
		var v any = res
		if plain {
			out := make([]map[string]any, len(res)) // encoding/json sorts the keys: kvctl's order
			for i, e := range res {
				out[i] = map[string]any{"ipc": e.IPC, "limit_bytes": e.LimitBytes, "used_bytes": e.UsedBytes}
			}
			v = out
		} else if err := markSeen(w, res); err != nil {
			fmt.Fprintln(stderr, "kvctl: warning:", err)
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	if len(res) == 0 {
		fmt.Fprintln(stdout, "No active KVCached segments found.")
		return 0
	}
	fmt.Fprintf(stdout, "%-24s %12s %12s %6s\n", "IPC", "Limit", "Used", "%")
	for _, e := range res {
		pct := 0.0
		if e.LimitBytes > 0 {
			pct = float64(e.UsedBytes) / float64(e.LimitBytes) * 100
		}
		fmt.Fprintf(stdout, "%-24s %12s %12s %5.1f %%\n", e.IPC, humanSize(e.LimitBytes), humanSize(e.UsedBytes), pct)
	}
	return 0
}

func humanSize(b int64) string {
	for i, unit := range []string{"GB", "MB", "KB"} {
		if d := int64(1) << (30 - 10*i); b >= d {
			return fmt.Sprintf("%.2f %s", float64(b)/float64(d), unit)
		}
	}
	return fmt.Sprintf("%d B", b)
}

// kvctlLimit is `limit <ipc> <size>` as released kvcached's cmd_limit
// does it (kvcached/cli/kvctl.py@2513db15eee5 (v0.1.5) l.254-270, the same
// at main @e8e640638ba7): an unknown IPC is an error on stderr and exit 0, as
// cmd_limit returns None and main() ignores it (l.464-465); only then is the
// size parsed. A later kvctl returns 1 there (kvctl.py@0a4c7834f480, "Returns
// a process exit code"); the runner reads every limit back either way.
func kvctlLimit(w *world, ipc, sizeArg string, stderr io.Writer) int {
	if err := w.lock.Lock(); err != nil {
		return fail(stderr, 1, "kvctl:", err)
	}
	defer w.lock.Unlock()
	seg, err := w.readSegment(ipc)
	if err != nil {
		fmt.Fprintf(stderr, "Error: IPC '%s' not found.\n", ipc)
		if segs, _ := w.segments(); len(segs) > 0 {
			var names []string
			for _, s := range segs {
				names = append(names, s.IPC)
			}
			fmt.Fprintln(stderr, "Active IPC names:", strings.Join(names, ", "))
		}
		return 0
	}
	size, err := parseSize(sizeArg)
	if err != nil {
		return fail(stderr, 1, "ValueError:", err)
	}
	seg.LimitBytes = size
	if err := w.writeSegment(seg); err != nil {
		return fail(stderr, 1, "kvctl:", err)
	}
	return 0
}

// kvctlPriority publishes a priority and waits for the owning server to take
// or refuse it. Like the real kvctl it exits 0 even when the publish is
// rejected: only a following list shows whether it took.
func kvctlPriority(ctx context.Context, w *world, ipc string, p int, faults faultSet, scale float64, stdout, stderr io.Writer) int {
	if err := validIPC(ipc); err != nil {
		return failf(stderr, 1, "Error: IPC '%s' not found.\n", ipc)
	}
	if faults.has(FaultRejectPriority, ipc) {
		fmt.Fprintf(stdout, "priority %d for %s: publish rejected\n", p, ipc)
		return 0
	}
	if err := w.lock.Lock(); err != nil {
		return fail(stderr, 1, "kvctl:", err)
	}
	seg, err := w.readSegment(ipc)
	if err != nil {
		w.lock.Unlock()
		return failf(stderr, 1, "Error: IPC '%s' not found.\n", ipc)
	}
	seg.PriorityRequest = p
	seg.PriorityRequestSeq++
	seq := seg.PriorityRequestSeq
	if !processAlive(seg.PID, seg.PIDStart) {
		seg.Priority = p // nobody to refuse it
		seg.PriorityAckSeq = seq
	}
	err = w.writeSegment(seg)
	w.lock.Unlock()
	if err != nil {
		return fail(stderr, 1, "kvctl:", err)
	}
	deadline := time.Now().Add(scaled(2*time.Second, scale, 500*time.Millisecond))
	for {
		cur, err := w.readSegment(ipc)
		if err == nil && cur.PriorityAckSeq >= seq {
			if cur.PriorityRejected {
				fmt.Fprintf(stdout, "priority %d for %s: publish rejected\n", p, ipc)
			} else {
				fmt.Fprintf(stdout, "priority of %s set to %d\n", ipc, p)
			}
			return 0
		}
		if err != nil || time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintf(stdout, "priority %d for %s: published, not acknowledged\n", p, ipc)
			return 0
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runBallast is `sim ballast --mib M [--gpu N]`: it holds total − M MiB of a
// simulated GPU until stopped, so the GPU behaves like an M MiB one.
func runBallast(ctx context.Context, w *world, gpu int, keepMiB int64, stdout, stderr io.Writer) int {
	if gpu < 0 || gpu >= len(w.gpus) {
		return failf(stderr, 1, "ballast: no GPU %d in a world of %d\n", gpu, len(w.gpus))
	}
	total := w.gpus[gpu].TotalMiB
	hold := max(total-keepMiB, 0)
	if err := w.lock.Lock(); err != nil {
		return fail(stderr, 1, "ballast:", err)
	}
	free := w.totalBytes(gpu) - usedBytes(w.liveProcs(), gpu, os.Getpid())
	if hold*mib > free {
		w.lock.Unlock()
		return failf(stderr, 1, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d MiB on GPU %d (%d MiB free)\n", hold, gpu, free/mib)
	}
	pid := os.Getpid()
	err := w.writeProc(procRecord{PID: pid, Start: processStart(pid), Kind: "ballast", GPUs: []int{gpu}, BytesPer: hold * mib})
	w.lock.Unlock()
	if err != nil {
		return fail(stderr, 1, "ballast:", err)
	}
	defer os.Remove(w.procPath(pid))
	fmt.Fprintf(stdout, "holding %d MiB of %d MiB on GPU %d, leaving %d MiB\n", hold, total, gpu, total-hold)
	fmt.Fprintln(stdout, "ballast ready")
	<-ctx.Done()
	fmt.Fprintln(stdout, "ballast released")
	return 0
}

// markSeen records in each segment that printed a posted shortfall or a
// raised watermark that a ledger read has shown it (segmentFile.ShortfallSeen),
// so that the world holds such a phase until a sampler has seen it.
func markSeen(w *world, printed []kvctlEntry) error {
	posted := func(e kvctlEntry) bool { return e.ShortfallBytes > 0 || e.WatermarkBytes > 0 }
	if !slices.ContainsFunc(printed, posted) {
		return nil
	}
	if err := w.lock.Lock(); err != nil {
		return err
	}
	defer w.lock.Unlock()
	for _, e := range printed {
		if !posted(e) {
			continue
		}
		seg, err := w.readSegment(e.IPC)
		if err != nil {
			continue // the server exited meanwhile
		}
		// Only what was printed: a phase posted since the read is not seen.
		shortfall := e.ShortfallBytes > 0 && seg.ShortfallBytes > 0 && !seg.ShortfallSeen
		watermark := e.WatermarkBytes > 0 && seg.WatermarkBytes > 0 && !seg.WatermarkSeen
		if !shortfall && !watermark {
			continue
		}
		seg.ShortfallSeen = seg.ShortfallSeen || shortfall
		seg.WatermarkSeen = seg.WatermarkSeen || watermark
		if err := w.writeSegment(seg); err != nil {
			return err
		}
	}
	return nil
}
