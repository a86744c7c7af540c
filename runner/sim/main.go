package sim

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/internal/bounds"
)

// MainEnv runs `ci-report sim <args>` with the environment given as a lookup
// function and returns the exit status; a test binary's TestMain calls it
// (with os.Getenv) to play a server.
func MainEnv(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		return failf(stderr, 2, "%s", usageText)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stderr, usageText)
		return 0
	case "serve":
		ignoreBrokenPipe()
		return mainServe(ctx, args[1:], stdout, stderr, getenv)
	case "kvctl":
		return mainKvctl(ctx, args[1:], stdout, stderr, getenv)
	case "ballast":
		return mainBallast(ctx, args[1:], stdout, stderr, getenv)
	case "versions":
		return mainVersions(args[1:], stdout, stderr, getenv)
	case "script":
		return mainScript(args[1:], stdout, stderr, getenv)
	case "models":
		return runModels(args[1:], stdout, getenv)
	case "world":
		return mainWorld(ctx, args[1:], stderr, getenv)
	}
	return failf(stderr, 2, "ci-report sim: unknown command %q\n%s", args[0], usageText)
}

// mainKvctl is `sim kvctl [--dir D] <kvctl args>`.
func mainKvctl(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("ci-report sim kvctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", getenv("CI_REPORT_SIM_DIR"), "simulated world directory")
	if err := fs.Parse(args); err != nil {
		return flagCode(err)
	}
	return runKvctl(ctx, *dir, getenv, fs.Args(), stdout, stderr)
}

// mainBallast is `sim ballast --mib M [--gpu N] [--dir D]`.
func mainBallast(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("ci-report sim ballast", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", getenv("CI_REPORT_SIM_DIR"), "simulated world directory")
	keep := fs.Int64("mib", -1, "MiB of the GPU left free (the ballast holds the rest)")
	gpu := fs.Int("gpu", -1, "GPU index (default: the first of CUDA_VISIBLE_DEVICES, else 0)")
	if err := fs.Parse(args); err != nil {
		return flagCode(err)
	}
	if *keep < 0 || fs.NArg() > 0 {
		return fail(stderr, 2, "usage: ci-report sim ballast --mib M [--gpu N] [--dir D]")
	}
	device, err := ballastDevice(*gpu, getenv)
	if err != nil {
		return fail(stderr, 2, "ballast:", err)
	}
	w, err := openWorld(*dir)
	if err != nil {
		return fail(stderr, 1, "ballast:", err)
	}
	defer w.lock.Close()
	// --gpu is a device index, as a ballast in a container sees it.
	world, err := deviceGPUs(getenv, len(w.gpus), func(n int) ([]int, error) {
		if device >= n {
			return nil, fmt.Errorf("no GPU %d among %d", device, n)
		}
		return []int{device}, nil
	})
	if err != nil {
		return fail(stderr, 1, "ballast:", err)
	}
	ignoreBrokenPipe()
	sctx, stop := stopContext(ctx)
	defer stop()
	return runBallast(sctx, w, world[0], *keep, stdout, stderr)
}

// ballastDevice is the ballast's device index: --gpu when given (≥ 0),
// else the first of CUDA_VISIBLE_DEVICES, else 0.
func ballastDevice(gpu int, getenv func(string) string) (int, error) {
	if gpu >= 0 {
		return gpu, nil
	}
	v := strings.TrimSpace(strings.Split(getenv("CUDA_VISIBLE_DEVICES"), ",")[0])
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("CUDA_VISIBLE_DEVICES=%q is not a GPU index", getenv("CUDA_VISIBLE_DEVICES"))
	}
	return n, nil
}

// mainVersions is `sim versions --engine vllm|sglang [--image IMAGE]`.
func mainVersions(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("ci-report sim versions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engine := fs.String("engine", "", "vllm or sglang")
	image := fs.String("image", "", "the engine's image: a tag other than the simulated version's stands in for that release")
	if err := fs.Parse(args); err != nil {
		return flagCode(err)
	}
	if *engine == "" || fs.NArg() > 0 {
		return fail(stderr, 2, "usage: ci-report sim versions --engine vllm|sglang [--image IMAGE]")
	}
	faults, err := parseFaults(getenv("CI_REPORT_SIM_FAULTS"))
	if err != nil {
		return fail(stderr, 2, "ci-report sim versions: CI_REPORT_SIM_FAULTS:", err)
	}
	version := getenv("CI_REPORT_SIM_ENGINE_VERSION")
	if v, ok := simVersions[*engine]["engine"].(string); ok && version == "" {
		// The engine release lane's image (`vllm/vllm-openai:v0.33.0`):
		// the simulated engine is that release.
		tag := strings.TrimPrefix((*image)[strings.LastIndexByte(*image, ':')+1:], "v")
		if strings.Contains(*image, ":") && !strings.Contains(tag, "/") && tag+"+sim" != v {
			version = tag
		}
	}
	return runVersions(*engine, getenv("CI_REPORT_SIM_KVCACHED_VERSION"), version, getenv("CI_REPORT_SIM_VLLM_MRV2_RANGE"), faults, stdout, stderr)
}

// mainWorld is `sim world --dir D [--gpus N] [--mib M] [--name S] [--driver S]`.
func mainWorld(ctx context.Context, args []string, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("ci-report sim world", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", getenv("CI_REPORT_SIM_DIR"), "simulated world directory to create")
	n := fs.Int("gpus", 1, "number of GPUs")
	total := fs.Int64("mib", DefaultTotalMiB, "memory of each GPU in MiB")
	name := fs.String("name", DefaultGPUName, "GPU name")
	driver := fs.String("driver", DefaultDriver, "driver version")
	if err := fs.Parse(args); err != nil {
		return flagCode(err)
	}
	if *dir == "" || fs.NArg() > 0 || *n < 1 || *total < 1 {
		return fail(stderr, 2, "usage: ci-report sim world --dir D [--gpus N] [--mib M] [--name S] [--driver S]")
	}
	if err := bounds.Int("--gpus", *n, 1, bounds.MaxGPU+1); err != nil {
		return failf(stderr, 2, "ci-report sim world: %v (GPU indices 0 to %d)\n", err, bounds.MaxGPU)
	}
	// The faults the world holds from its start, as run --simulate makes it.
	faults := getenv("CI_REPORT_SIM_FAULTS")
	if err := ValidateFaults(faults); err != nil {
		return fail(stderr, 2, "ci-report sim world: CI_REPORT_SIM_FAULTS:", err)
	}
	// A signal before the world is written leaves the directory as it was.
	if ctx.Err() != nil {
		return fail(stderr, 1, "ci-report sim world:", context.Cause(ctx))
	}
	if err := NewWorld(*dir, WorldOptions{GPUs: *n, TotalMiB: *total, Name: *name, Driver: *driver, Faults: faults}); err != nil {
		return fail(stderr, 1, "ci-report sim world:", err)
	}
	return 0
}

const usageText = `usage: ci-report sim <command> [args]

commands:
  serve --engine vllm|sglang [--dir D] -- <real server argv>   a simulated inference server
  kvctl [--dir D] list [--json] | limit <ipc> <size> | priority <ipc> <p>
  ballast --mib M [--gpu N] [--dir D]   hold all but M MiB of a simulated GPU
  world --dir D [--gpus N] [--mib M]     create a simulated world
  versions --engine vllm|sglang [--image IMAGE]
                                         the runner's version probe: installed versions as JSON
  models <hf id>...                      the runner's model probe: the cached models' config.json as JSON
  script -- <argv>                       a command case's script (kvcached's validate_cpu_offload_vmm.py)

The world directory defaults to $CI_REPORT_SIM_DIR. Faults: $CI_REPORT_SIM_FAULTS;
time scale: $CI_REPORT_SIM_TIMESCALE; each kvctl call's delay: $CI_REPORT_SIM_KVCTL_DELAY.
See the runner/sim package documentation.
`

func flagCode(err error) int {
	if err == flag.ErrHelp {
		return 0
	}
	return 2
}

func mainServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("ci-report sim serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engine := fs.String("engine", "", "vllm or sglang")
	dir := fs.String("dir", getenv("CI_REPORT_SIM_DIR"), "simulated world directory")
	if err := fs.Parse(args); err != nil {
		return flagCode(err)
	}
	if *engine != "vllm" && *engine != "sglang" {
		return fail(stderr, 2, "usage: ci-report sim serve --engine vllm|sglang [--dir D] -- <server argv>")
	}
	return runServe(ctx, serveEnv{getenv: getenv, stdout: stdout, stderr: stderr, now: time.Now, dir: *dir}, *engine, fs.Args())
}

// stopContext is ctx, also cancelled by SIGINT, SIGTERM, or the parent
// process going away (a helper must never outlive its runner).
func stopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	ppid := os.Getppid()
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != ppid {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// fail prints a line of a to w, as fmt.Fprintln does, and returns code: a
// command's failure in one statement.
func fail(w io.Writer, code int, a ...any) int {
	fmt.Fprintln(w, a...)
	return code
}

// failf is fail with fmt.Fprintf's format.
func failf(w io.Writer, code int, format string, a ...any) int {
	fmt.Fprintf(w, format, a...)
	return code
}
