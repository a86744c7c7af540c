package runner

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/engine"
)

// ballastReadyLine is what a ballast prints once it holds its memory.
const ballastReadyLine = "ballast ready"

// ballastConfig says how to start the ballast of a co-location case: a helper
// holding part of the GPU so that a large GPU behaves like a smaller one.
type ballastConfig struct {
	// Name is the case directory, `<kind>-ballast`, shared by the pairs of a
	// kind in a part, each start appended after `=== <Pair> ===`; Dir its path.
	Name, Pair, Dir string
	// Argv is the ballast command; `--mib M --gpu N` are appended: it holds
	// the GPU's total minus M (the contract of `ci-report sim ballast`).
	Argv       []string
	ExecPrefix []string
	KeepMiB    int64 // M, the memory the ballast leaves to the case
	// GPU is the host index of the GPU to fill; Device the index its
	// container knows it by (Runner.DeviceIndices).
	GPU, Device  int
	ReadyTimeout time.Duration       // Timing.BallastReady
	Poll         time.Duration       // between looks at the ballast's log
	Server       engine.ServerConfig // the stop signal, redaction and stop timing
}

// ballastMiB is what a ballast must hold so that a GPU of totalMiB behaves
// like one of wantMiB; 0 means no ballast is needed.
func ballastMiB(totalMiB, wantMiB int64) int64 {
	if wantMiB <= 0 || totalMiB <= wantMiB {
		return 0
	}
	return totalMiB - wantMiB
}

// startBallast starts the ballast and waits until its log says it is ready.
// On failure the ballast is stopped again and the error says why, with the
// end of its log.
func startBallast(ctx context.Context, cfg ballastConfig) (*engine.Server, error) {
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("ballast %s: no ballast command configured (--ballast-cmd)", cfg.Name)
	}
	sc := cfg.Server
	sc.Name, sc.Dir, sc.ExecPrefix, sc.Header = cfg.Name, cfg.Dir, cfg.ExecPrefix, cmp.Or(cfg.Pair, cfg.Name)
	sc.Argv = append(append([]string(nil), cfg.Argv...), "--mib", strconv.FormatInt(cfg.KeepMiB, 10), "--gpu", strconv.Itoa(cfg.Device))
	srv, err := engine.Start(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("ballast leaving %d MiB of GPU %d: %w", cfg.KeepMiB, cfg.GPU, err)
	}
	deadline := time.Now().Add(cfg.ReadyTimeout)
	for {
		// Only this start's output counts: an earlier pair's ballast shares the log.
		logData := readFrom(srv.LogPath(), srv.LogStart())
		if bytes.Contains(logData, []byte(ballastReadyLine)) {
			return srv, nil
		}
		var why string
		switch {
		case !srv.Alive():
			why = "exited before it said " + strconv.Quote(ballastReadyLine)
		case time.Now().After(deadline):
			why = fmt.Sprintf("did not say %q within %s", ballastReadyLine, cfg.ReadyTimeout)
		case ctx.Err() != nil:
			why = "interrupted while waiting for it"
		}
		if why != "" {
			srv.Stop()
			logData = readFrom(srv.LogPath(), srv.LogStart())
			msg := fmt.Sprintf("ballast leaving %d MiB of GPU %d (%s) %s", cfg.KeepMiB, cfg.GPU, sc.CommandLine(), why)
			if t := logTail(logData, 300); t != "" {
				msg += "; log ends: " + t
			}
			return nil, fmt.Errorf("%s", msg)
		}
		sleep(ctx, cfg.Poll)
	}
}

// readFrom returns file's bytes from offset on (nil when unreadable: the
// caller waits or reports without them).
func readFrom(file string, offset int64) []byte {
	data, err := os.ReadFile(file)
	if err != nil || offset > int64(len(data)) {
		return nil
	}
	return data[offset:]
}

// logTail is the end of a log as one line of valid UTF-8, at most n code points.
func logTail(data []byte, n int) string {
	data = bytes.TrimSpace(data)
	if len(data) > 4*n {
		data = data[len(data)-4*n:]
	}
	return text.Tail(text.Words(string(data)), n)
}
