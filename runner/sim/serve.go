package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/text"
)

// Simulated times at time scale 1; CI_REPORT_SIM_TIMESCALE multiplies them.
const (
	vllmLoadTime     = 6 * time.Second
	sglangLoadTime   = 5 * time.Second
	prefillPerToken  = 20 * time.Microsecond
	decodePerToken   = 4 * time.Millisecond
	shutdownTime     = 400 * time.Millisecond
	retentionGrace   = 3 * time.Second // idle time before the retention cap trims the idle cache
	ledgerHold       = 6 * time.Second // how long a shortfall and a watermark stay posted
	allocWaitTimeout = 300 * time.Second
	tickPeriod       = 100 * time.Millisecond
	statsPeriod      = 10 * time.Second // vLLM's and SGLang's periodic stats lines
)

// scaled multiplies d by the time scale, never below floor.
func scaled(d time.Duration, scale float64, floor time.Duration) time.Duration {
	return max(time.Duration(float64(d)*scale), floor)
}

// RetentionGrace is how long a kvcached server must have been idle (no request
// running or waiting) before its idle cache is trimmed to the retention cap,
// at time scale scale.
func RetentionGrace(scale float64) time.Duration {
	return scaled(retentionGrace, scale, 150*time.Millisecond)
}

// LedgerHold is how long a posted shortfall and a raised watermark stay in
// the ledger after the condition ended, at time scale scale, so that a
// sampler polling every 2 s (scaled) sees them.
func LedgerHold(scale float64) time.Duration {
	return scaled(ledgerHold, scale, 200*time.Millisecond)
}

// ParseTimescale reads CI_REPORT_SIM_TIMESCALE ("" means 1).
func ParseTimescale(s string) (float64, error) {
	if strings.TrimSpace(s) == "" {
		return 1, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(f > 0 && f <= 1000) { // written so that NaN fails
		return 0, fmt.Errorf("CI_REPORT_SIM_TIMESCALE=%s: want a number > 0 and ≤ 1000", bounds.Quote(s))
	}
	return f, nil
}

// serveEnv is what sim serve reads from its environment and streams.
type serveEnv struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
	now    func() time.Time
	dir    string
}

// simServer is one simulated inference server.
type simServer struct {
	cfg       serverConfig
	w         *world
	gpus      []int
	log       *engineLog
	faults    faultSet
	ids       []string // identities that fault scopes match
	scale     float64
	now       func() time.Time
	pid       int
	pidStart  uint64
	elastic   bool
	ipc       string
	retainCap int64  // -1: no cap
	fixed     int64  // weights + overhead on each GPU
	devMode   bool   // vLLM: VLLM_SERVER_DEV_MODE=1 exposes /reset_prefix_cache
	sideHost  string // VLLM_NIXL_SIDE_CHANNEL_HOST/_PORT: the NIXL side channel (pd.go)
	sidePort  int

	mu            sync.Mutex
	kv            *kvModel
	slots         chan struct{}
	waiters       []*waiter
	inflight      int
	running       int
	lastBusy      time.Time
	needBytes     int64 // current shortfall
	shortfall     int64 // posted shortfall (held for LedgerHold)
	shortfallAt   time.Time
	watermark     int64
	watermarkAt   time.Time
	priority      int
	ackSeq        int64
	reqSeq        int64
	lastLimit     int64
	keptOverLimit int64     // the limit an idle server under no-idle-limit-release last logged
	keptIdle      time.Time // the lastBusy of the idle spell it last logged keeping its cache
	// grouped: the server's KV is spread over `<ipc>` and `<ipc>_g1`
	// (groupIPC); groupLimit is group 1's limit_bytes, the rest group 0's.
	grouped          bool
	groupLimit       int64
	writtenProcBytes int64 // what procs/<pid>.json last said
	// Since the last stats line: prompt, cached and generated tokens.
	statPrompt, statCached, statGen int64

	dead      chan struct{} // closed when the engine crashed
	crashOnce sync.Once
	exit      func(code int) // os.Exit: a crashed engine dies at once
}

type waiter struct {
	r     *reservation
	ready chan struct{}
	err   error
}

// runServe is `sim serve --engine E -- argv...`.
func runServe(ctx context.Context, env serveEnv, engine string, argv []string) int {
	if of := env.getenv(orphanEnv); of != "" {
		return holdAsOrphan(of, env.dir)
	}
	if slices.ContainsFunc(argv, func(a string) bool { return a == "--help" || strings.HasPrefix(a, "--help=") }) {
		fmt.Fprint(env.stdout, helpText(engine))
		return 0
	}
	s, err := newSimServer(env, engine, argv)
	if err != nil {
		return fail(env.stderr, 2, err)
	}
	// Signals first: a stop during loading must still be clean.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	stop := make(chan string, 1)
	go s.watchStop(ctx, sig, os.Getppid(), stop)
	return s.run(env, stop)
}

// newSimServer reads the engine's command line and environment into a
// server, or says why it cannot start.
func newSimServer(env serveEnv, engine string, argv []string) (*simServer, error) {
	cfg, err := parseEngineArgv(engine, argv)
	if err != nil {
		return nil, err
	}
	faults, err := parseFaults(env.getenv("CI_REPORT_SIM_FAULTS"))
	if err != nil {
		return nil, fmt.Errorf("ci-report sim serve: CI_REPORT_SIM_FAULTS: %w", err)
	}
	scale, err := ParseTimescale(env.getenv("CI_REPORT_SIM_TIMESCALE"))
	if err != nil {
		return nil, fmt.Errorf("ci-report sim serve: %w", err)
	}
	s := &simServer{
		cfg: cfg, faults: faults, scale: scale, now: env.now, pid: os.Getpid(),
		log:  &engineLog{engine: engine, out: env.stdout, errw: env.stderr, now: env.now},
		dead: make(chan struct{}), exit: os.Exit,
		elastic: truthy(env.getenv("ENABLE_KVCACHED")) && truthy(env.getenv("KVCACHED_AUTOPATCH")),
		devMode: env.getenv("VLLM_SERVER_DEV_MODE") == "1", sideHost: env.getenv("VLLM_NIXL_SIDE_CHANNEL_HOST"),
	}
	s.pidStart = processStart(s.pid)
	s.sidePort, _ = strconv.Atoi(env.getenv("VLLM_NIXL_SIDE_CHANNEL_PORT"))
	if s.elastic {
		s.ipc = cmp.Or(kvcachedIPCName(env.getenv("KVCACHED_IPC_NAME")), "kvcached_"+engine+"_"+strconv.Itoa(s.pid))
		if err := validIPC(s.ipc); err != nil {
			return nil, fmt.Errorf("[kvcached] error: %w", err)
		}
	}
	s.ids = []string{s.ipc, cfg.Model.HFID, cfg.Model.Key, cfg.ModelArg, engine, "port=" + strconv.Itoa(cfg.Port), cfg.ServedName}
	s.faults = s.faults.firing(env.dir, s.ids)
	return s, nil
}

// watchStop sends on stop why the server is to stop: a signal, ctx's end,
// or the exit of its parent ppid (a simulator must never outlive its
// runner). Under the ignore-stop fault signals and ctx's end are ignored.
func (s *simServer) watchStop(ctx context.Context, sig <-chan os.Signal, ppid int, stop chan<- string) {
	ignoreStop := s.faults.has(FaultIgnoreStop, s.ids...)
	orphan := time.NewTicker(200 * time.Millisecond)
	defer orphan.Stop()
	for {
		select {
		case sg := <-sig:
			if ignoreStop {
				s.ignoreSignal(sg)
				continue
			}
			stop <- "signal " + sg.String()
			return
		case <-ctx.Done():
			if ignoreStop {
				continue
			}
			stop <- "context cancelled"
			return
		case <-orphan.C:
			if os.Getppid() != ppid {
				stop <- "parent process exited"
				return
			}
		}
	}
}

func truthy(v string) bool {
	return slices.Contains([]string{"1", "true", "yes", "on"}, strings.ToLower(strings.TrimSpace(v)))
}

// run loads the model, serves until stopped or crashed, and cleans up.
func (s *simServer) run(env serveEnv, stop <-chan string) int {
	cfg := s.cfg
	s.startupLogs(env)
	w, err := openWorld(env.dir)
	if err != nil {
		s.fatal([]string{`File "/usr/lib/python3/dist-packages/torch/cuda/__init__.py", line 372, in _lazy_init`,
			`  torch._C._cuda_init()`}, "RuntimeError: No CUDA GPUs are available ("+err.Error()+")")
		return 1
	}
	s.w = w
	defer w.lock.Close()
	if !s.pickGPUs(env) {
		return 1
	}
	s.fixed = cfg.weightsBytes() + cfg.overheadBytes()
	if s.faults.has(FaultOrphanHoldsPort, s.ids...) {
		return s.orphanHoldsPort(env)
	}

	// Loading the weights takes time; a stop meanwhile is clean.
	load := map[string]time.Duration{"vllm": vllmLoadTime, "sglang": sglangLoadTime}[cfg.Engine]
	if why, stopped := sleepUnless(scaled(load/2, s.scale, time.Millisecond), stop); stopped {
		return s.shutdown(why, nil, false)
	}
	if err := s.allocate(); err != nil {
		s.fatal([]string{`File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_worker.py", line 239, in determine_available_memory`,
			`  torch.cuda.empty_cache()`}, err.Error())
		s.cleanup(s.kv != nil) // a half-way registration leaves no record
		return 1
	}
	const registered = true
	if name, err := s.breakGPUs(); name != "" {
		// The GPU went bad while the engine started: CUDA's error names no
		// cause (the runner's machine facts do).
		if err != nil {
			s.log.warn("gpu_health", "could not break the GPU: %v", err)
		}
		msg := "RuntimeError: CUDA error: unspecified launch failure (fault " + name + ")"
		if name == FaultDiskRO { // every write fails: EROFS in the engine's words
			msg = "OSError: [Errno 30] Read-only file system: '/dev/shm/kvcached' (fault " + name + ")"
		}
		s.fatal([]string{`File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 2310, in profile_run`}, msg)
		s.cleanup(registered)
		return 1
	}
	if s.faults.has(FaultNeverReady, s.ids...) {
		// Stuck after allocating: /health never answers.
		s.log.info("core.py:95", "Initializing a V1 LLM engine with config: model=%q, dtype=torch.bfloat16", cfg.ModelArg)
		why := <-stop
		return s.shutdown(why, nil, registered)
	}
	if why, stopped := sleepUnless(scaled(load/2, s.scale, time.Millisecond), stop); stopped {
		return s.shutdown(why, nil, registered)
	}
	ln, ok := s.listen()
	if !ok {
		s.cleanup(registered)
		return 1
	}
	return s.serve(ln, stop)
}

// pickGPUs sets the server's GPUs, the first TP of those it sees, or fails
// as the engine does.
func (s *simServer) pickGPUs(env serveEnv) bool {
	gpus, err := deviceGPUs(env.getenv, len(s.w.gpus), func(n int) ([]int, error) {
		return visibleGPUs(env.getenv("CUDA_VISIBLE_DEVICES"), n)
	})
	if err != nil {
		s.fatal(nil, "RuntimeError: CUDA error: invalid device ordinal ("+err.Error()+")")
		return false
	}
	if len(gpus) < s.cfg.TP {
		s.fatal([]string{`File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/ray_utils.py", line 310, in initialize_ray_cluster`},
			fmt.Sprintf("ValueError: The number of required GPUs exceeds the total number of available GPUs (%d > %d)", s.cfg.TP, len(gpus)))
		return false
	}
	s.gpus = gpus[:s.cfg.TP]
	return true
}

// listen binds the server's port (the port-taken fault fails it).
func (s *simServer) listen() (ln net.Listener, ok bool) {
	cfg := s.cfg
	var err error
	if s.faults.has(FaultPortTaken, s.ids...) {
		err = errors.New("listen tcp: bind: address already in use (fault port-taken)")
	} else {
		host := cfg.Host
		if host == "0.0.0.0" {
			host = "" // every address, IPv6 too
		}
		ln, err = net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(cfg.Port)))
	}
	if err != nil {
		s.fatal([]string{`File "/usr/lib/python3.12/asyncio/base_events.py", line 1536, in create_server`,
			`  raise OSError(err.errno, msg) from None`},
			fmt.Sprintf("OSError: [Errno 98] error while attempting to bind on address ('%s', %d): address already in use (%v)", cfg.Host, cfg.Port, err))
		return nil, false
	}
	return ln, true
}

// serve answers HTTP on ln and runs the tick and stats loops until stopped.
func (s *simServer) serve(ln net.Listener, stop <-chan string) int {
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln)
	tickDone := make(chan struct{})
	tickStop := make(chan struct{})
	go s.tickLoop(tickStop, tickDone)
	go s.statsLoop(tickStop)
	s.logReady(ln.Addr().(*net.TCPAddr).Port)
	why := <-stop
	close(tickStop)
	<-tickDone
	return s.shutdown(why, srv, true)
}

// logReady logs the engine's lines of a server ready on port.
func (s *simServer) logReady(port int) {
	host, vllm := s.cfg.Host, s.cfg.Engine == "vllm"
	if vllm {
		s.log.info("api_server.py:1912", "Starting vLLM API server 0 on http://%s:%d", host, port)
	}
	s.log.uvicorn("Started server process [%d]", s.pid)
	s.log.uvicorn("Waiting for application startup.")
	s.log.uvicorn("Application startup complete.")
	if vllm {
		return
	}
	s.log.uvicorn("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", host, port)
	s.log.info("http_server.py:1268", "The server is fired up and ready to roll!")
}

// containerGPUsEnv names the world GPUs a simulated container was given
// (docs/runner.md §7.2).
const containerGPUsEnv = "CI_REPORT_SIM_CONTAINER_GPUS"

// deviceGPUs returns the world GPUs of the device indices a process names
// (its CUDA_VISIBLE_DEVICES, its --gpu), which devices parses given how many
// GPUs the process can see: under CI_REPORT_SIM_CONTAINER_GPUS the
// container's, device i being the i-th lowest of them.
func deviceGPUs(getenv func(string) string, world int, devices func(n int) ([]int, error)) ([]int, error) {
	v := strings.TrimSpace(getenv(containerGPUsEnv))
	if v == "" {
		return devices(world)
	}
	c, err := gpuList(containerGPUsEnv, v, world, true)
	if err != nil {
		return nil, err
	}
	slices.Sort(c)
	dev, err := devices(len(c))
	if err != nil {
		return nil, fmt.Errorf("%w (in a container of world GPUs %v)", err, c)
	}
	for k, d := range dev {
		dev[k] = c[d] // the container's device d is its d-th lowest world GPU
	}
	return dev, nil
}

// visibleGPUs parses CUDA_VISIBLE_DEVICES into device indices below n; empty
// means all n.
func visibleGPUs(v string, n int) ([]int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	return gpuList("CUDA_VISIBLE_DEVICES", v, n, false)
}

// gpuList parses the comma-separated indices below n of the variable name,
// each once when unique.
func gpuList(name, v string, n int, unique bool) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= n || (unique && slices.Contains(out, i)) {
			return nil, fmt.Errorf("%s=%s: no GPU %s in a world of %d", name, bounds.Quote(v), bounds.Quote(f), n)
		}
		out = append(out, i)
	}
	return out, nil
}

func (s *simServer) startupLogs(env serveEnv) {
	cfg := s.cfg
	if cfg.Engine == "vllm" {
		s.log.info("__init__.py:241", "Automatically detected platform cuda.")
		s.log.info("api_server.py:1805", "vLLM API server version 0.30.0 (simulated by ci-report)")
		s.log.info("utils.py:326", "non-default args: {'model_tag': %q, 'host': %q, 'port': %d, 'served_model_name': [%q], 'max_num_seqs': %d, 'gpu_memory_utilization': %g}",
			cfg.ModelArg, cfg.Host, cfg.Port, cfg.ServedName, cfg.MaxSeqs, cfg.MemFraction)
	} else {
		s.log.write(s.log.out, fmt.Sprintf("[%s] server_args=ServerArgs(model_path=%q, served_model_name=%q, host=%q, port=%d, mem_fraction_static=%g, max_running_requests=%d, tp_size=%d, random_seed=42)",
			s.now().Format("2006-01-02 15:04:05"), cfg.ModelArg, cfg.ServedName, cfg.Host, cfg.Port, cfg.MemFraction, cfg.MaxSeqs, cfg.TP))
	}
	s.retainCap = DefaultMaxCachedTokens
	if !s.elastic {
		return
	}
	s.log.kvcached("Successfully patched %s: %s", cfg.Engine, strings.Join(patchesFor(cfg.Engine, cfg.Model), ", "))
	s.log.kvcached("IPC name %s, contiguous layout %s", s.ipc, strconv.FormatBool(truthy(env.getenv("KVCACHED_CONTIGUOUS_LAYOUT"))))
	if cfg.KVTransfer != "" {
		s.log.kvcached("%s", nixlPatchLine)
		s.log.kvcached("%s", nixlLayoutLine)
	}
	if v := strings.TrimSpace(env.getenv("KVCACHED_MAX_CACHED_TOKENS")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n < -1:
			s.log.kvcached("WARNING: ignoring KVCACHED_MAX_CACHED_TOKENS=%q (want an integer ≥ -1); using %d", v, DefaultMaxCachedTokens)
		case n == -1 && s.faults.has(FaultCapNotLifted, s.ids...):
			// The fault: the lifted cap never reaches the allocator.
		default:
			s.retainCap = n
		}
	}
	capText := strconv.FormatInt(s.retainCap, 10) + " tokens"
	if s.retainCap < 0 {
		capText = "unlimited"
	}
	s.log.kvcached("prefix cache retention cap: %s", capText)
}

// allocate loads the weights onto the GPUs and sets up the KV cache: the
// whole preallocation natively, a virtual capacity and a segment under kvcached.
func (s *simServer) allocate() error {
	cfg := s.cfg
	if err := s.w.lock.Lock(); err != nil {
		return fmt.Errorf("RuntimeError: %v", err)
	}
	defer s.w.lock.Unlock()
	m := memoryPlan{total: s.w.totalBytes(s.gpus[0])}
	m.budget = int64(cfg.MemFraction * float64(m.total))
	m.kvBytes = m.budget - s.fixed
	bpt := cfg.kvBytesPerToken()
	if m.kvBytes < bpt*int64(cfg.MaxModelLenOr(8192)) {
		return pyExc("ValueError: No available memory for the cache blocks: %s budget (%.2f × %s) minus %s of weights and activations leaves %s. Try increasing `gpu_memory_utilization` when initializing the engine.",
			gib(m.budget), cfg.MemFraction, gib(m.total), gib(s.fixed), gib(m.kvBytes))
	}
	m.need = s.fixed
	if !s.elastic {
		m.need += m.kvBytes
	}
	if err := s.checkFree(m); err != nil {
		return err
	}
	m.capTokens = m.kvBytes / bpt
	s.kv = newKVModel(s.elastic, s.blockSize(), bpt, m.capTokens)
	s.kv.limitBytes = m.kvBytes
	s.grouped = s.elastic && spreadsOverGroups(cfg.Engine, cfg.Model.Hybrid)
	if s.grouped {
		s.groupLimit = groupShare(m.kvBytes)
	}
	s.lastLimit = s.kv.limitBytes
	s.slots = make(chan struct{}, cfg.MaxSeqs)
	s.lastBusy = s.now()
	s.logAllocation(m)
	return s.register()
}

// memoryPlan is how a server divides a GPU, in bytes: the GPU's total, the
// engine's budget (its memory fraction), what it needs at start and the KV
// share of the budget, which holds capTokens tokens.
type memoryPlan struct {
	total, budget, need, kvBytes, capTokens int64
}

// checkFree fails as the engine does when one of its GPUs has less than
// m.need free.
func (s *simServer) checkFree(m memoryPlan) error {
	procs := s.w.liveProcs()
	for _, g := range s.gpus {
		free := s.w.totalBytes(g) - usedBytes(procs, g, s.pid)
		if m.need <= free {
			continue
		}
		if s.elastic {
			return pyExc("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free.", gib(m.need), g, gib(s.w.totalBytes(g)), gib(free))
		}
		return pyExc("ValueError: Free memory on device cuda:%d (%s/%s) on startup is less than desired GPU memory utilization (%g, %s). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
			g, gib(free), gib(s.w.totalBytes(g)), s.cfg.MemFraction, gib(m.budget))
	}
	return nil
}

// blockSize is the KV block size in tokens: --block-size, else 16; vLLM
// itself, kvcached or not, enlarges a hybrid model's attention block so
// that its page is at least the mamba page, when --block-size is unset or
// smaller (vllm/model_executor/models/config.py@0144dd5b0d2d,
// HybridAttentionMambaModelConfig.verify_and_update_config).
func (s *simServer) blockSize() int {
	cfg := s.cfg
	if cfg.Engine == "vllm" && cfg.Model.Hybrid && (cfg.BlockSize == 0 || cfg.BlockSize < hybridBlockTokens) {
		s.log.info("config.py:412", "Setting attention block size to %d tokens to ensure that attention page size is >= mamba page size.", hybridBlockTokens)
		if s.elastic && cfg.BlockSize == 0 {
			// kvcached's HybridBlockSizeAlignPatch then grows it so that the
			// KV unit tiles its page; the harness passes that size to the
			// native server as --block-size (tests/e2e/run.py@28183ff482dc).
			unit := int64(kvcachedHybridBlockTokens) * s.cfg.Model.KVBytesPerTok
			s.log.info("patches.py:1", "Setting attention block size to %d tokens (was %d) so the KV unit (%d bytes) tiles the %d-byte kvcached page", kvcachedHybridBlockTokens, hybridBlockTokens, unit, unit)
			return kvcachedHybridBlockTokens
		}
		return hybridBlockTokens
	}
	return cmp.Or(cfg.BlockSize, 16)
}

// logAllocation logs the engine's lines on its weights and KV cache.
func (s *simServer) logAllocation(m memoryPlan) {
	cfg := s.cfg
	if cfg.Engine != "vllm" {
		s.log.info("model_runner.py:640", "Load weight end. type=%s, dtype=torch.bfloat16, avail mem=%.2f GB, mem usage=%.2f GB.", cfg.Model.Arch, float64(m.total-s.fixed)/1e9, float64(s.fixed)/1e9)
		s.log.info("memory_pool.py:320", "KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB", m.capTokens, float64(m.kvBytes)/2e9, float64(m.kvBytes)/2e9)
		s.log.info("scheduler.py:310", "max_total_num_tokens=%d, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=%d, context_len=%d, available_gpu_mem=%.2f GB",
			m.capTokens, cfg.MaxSeqs, cfg.MaxModelLenOr(8192), float64(m.total-m.need)/1e9)
		return
	}
	s.log.info("gpu_model_runner.py:2217", "Model loading took %s and %.1f seconds", gib(cfg.Model.WeightsMiB*mib), float64(vllmLoadTime)/2/float64(time.Second)*s.scale)
	if s.elastic {
		s.log.info("gpu_worker.py:276", "Using kvcached process-local KV capacity: budget=%d bytes, reserved=%d bytes, available=%d bytes", m.budget, s.fixed, m.kvBytes)
	} else {
		s.log.info("gpu_worker.py:298", "Available KV cache memory: %s", gib(m.kvBytes))
	}
	s.log.info("kv_cache_utils.py:1087", "GPU KV cache size: %s tokens", text.Commas(m.capTokens))
	s.log.info("kv_cache_utils.py:1091", "Maximum concurrency for %s tokens per request: %.2fx", text.Commas(int64(cfg.MaxModelLenOr(8192))), float64(m.capTokens)/float64(cfg.MaxModelLenOr(8192)))
}

// register writes the server's process record and, under kvcached, its
// segments, their /dev/shm files and its socket dir.
func (s *simServer) register() error {
	if err := s.w.writeProc(s.procRecord()); err != nil {
		return fmt.Errorf("RuntimeError: %v", err)
	}
	s.writtenProcBytes = s.procRecord().BytesPer
	if !s.elastic {
		return nil
	}
	segs := []segmentFile{s.segment(segmentFile{})}
	if s.grouped {
		segs = append(segs, s.groupSegment(segmentFile{}))
	}
	for _, seg := range segs {
		if err := s.w.writeSegment(seg); err != nil {
			return fmt.Errorf("RuntimeError: %v", err)
		}
		if err := os.WriteFile(filepath.Join(ShmDir(s.w.dir), seg.IPC), []byte(seg.IPC+"\n"), 0o644); err != nil {
			return fmt.Errorf("RuntimeError: create shared memory segment: %v", err)
		}
	}
	if makesSocketDir(s.cfg.Engine, s.cfg.TP) {
		if err := os.MkdirAll(s.w.socketDir(s.ipc), 0o755); err != nil {
			return fmt.Errorf("RuntimeError: create socket dir: %v", err)
		}
	}
	s.log.kvcached("created shared memory segment /dev/shm/%s on GPU %d (limit %d bytes)", s.ipc, s.gpus[0], s.kv.limitBytes)
	return nil
}

// hybridBlockTokens is the attention block size vLLM gives the simulated
// hybrid models (real ones get sizes such as 528, 784 or 1056).
const hybridBlockTokens = 128

// kvcachedHybridBlockTokens is the block size the simulated kvcached grows a
// hybrid model's vLLM attention block to (real ones: 784 -> 1024 for a 4 MiB
// page); not a multiple of hybridBlockTokens, so that a native server without
// it reports other cached-token counts, as a real one does.
const kvcachedHybridBlockTokens = 384

// MaxModelLenOr is the context length, or def when the argv left it to the model.
func (c serverConfig) MaxModelLenOr(def int) int {
	return min(cmp.Or(c.MaxModelLen, def), def)
}

func (s *simServer) procRecord() procRecord {
	var kv int64
	if s.kv != nil {
		kv = s.kv.mappedBytes()
	}
	return procRecord{PID: s.pid, Start: s.pidStart, Kind: "server", Engine: s.cfg.Engine, Model: s.cfg.Model.HFID,
		IPC: s.ipc, GPUs: s.gpus, BytesPer: s.fixed + kv}
}

// segment fills a segment from the server's state, keeping kvctl's fields of old.
func (s *simServer) segment(old segmentFile) segmentFile {
	seg := old
	seg.IPC, seg.GPU, seg.PID, seg.PIDStart, seg.Engine = s.ipc, s.gpus[0], s.pid, s.pidStart, s.cfg.Engine
	seg.LimitBytes = s.kv.limitBytes
	seg.UsedBytes = s.kv.mappedBytes()
	if s.grouped {
		seg.LimitBytes -= s.groupLimit
		seg.UsedBytes -= groupShare(seg.UsedBytes)
	}
	seg.ChargedBytes = seg.UsedBytes
	seg.Priority = s.priority
	seg.NeedBytes = s.needBytes
	seg.ShortfallBytes = s.shortfall
	seg.WatermarkBytes = s.watermark
	seg.ShortfallSeen = seg.ShortfallSeen && s.shortfall > 0
	seg.WatermarkSeen = seg.WatermarkSeen && s.watermark > 0
	seg.PriorityAckSeq = s.ackSeq
	return seg
}

// writeSegment writes seg, raising its high-water mark to its usage: every
// change of used_bytes goes through here, under the world lock.
func (w *world) writeSegment(seg segmentFile) error {
	seg.PeakUsedBytes = max(seg.PeakUsedBytes, seg.UsedBytes)
	return writeJSONAtomic(w.segmentPath(seg.IPC), seg)
}

// ignoreSignal is fault ignore-stop: kvcached's own handler cleans its
// segment, then the engine's shutdown hangs.
func (s *simServer) ignoreSignal(sg os.Signal) {
	s.log.uvicorn("Shutting down")
	if s.elastic && s.w != nil {
		s.removeKvcachedFiles()
	}
	s.log.warn("launcher.py:101", "received %s; shutdown is stuck waiting for the engine core (fault ignore-stop)", sg)
}

// sleepUnless sleeps d unless c delivers first: then what it delivered, and true.
func sleepUnless[T any](d time.Duration, c <-chan T) (T, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		var zero T
		return zero, false
	case v := <-c:
		return v, true
	}
}

// fatal logs a startup failure the way the engine dies of it.
func (s *simServer) fatal(frames []string, exc string) {
	fr := append([]string{`File "/usr/local/bin/` + s.cfg.Engine + `", line 10, in <module>`, `  sys.exit(main())`}, frames...)
	s.log.traceback(fr, exc)
}

// shutdown stops serving and exits cleanly within the stop window.
func (s *simServer) shutdown(why string, srv *http.Server, registered bool) int {
	if s.cfg.Engine == "vllm" {
		s.log.info("launcher.py:101", "Shutting down FastAPI HTTP server (%s).", why)
	} else {
		s.log.info("http_server.py:1301", "Received %s, shutting down.", why)
	}
	if srv != nil {
		srv.Close()
	}
	s.mu.Lock()
	for _, wt := range s.waiters {
		wt.err = errors.New("server shutting down")
		close(wt.ready)
	}
	s.waiters = nil
	s.mu.Unlock()
	time.Sleep(scaled(shutdownTime, s.scale, 0))
	s.log.uvicorn("Shutting down")
	s.log.uvicorn("Waiting for application shutdown.")
	s.log.uvicorn("Application shutdown complete.")
	s.log.uvicorn("Finished server process [%d]", s.pid)
	s.cleanup(registered)
	return 0
}

// cleanup removes what the process registered in the world (the process
// record always: the driver frees a dead process's GPU memory anyway).
func (s *simServer) cleanup(registered bool) {
	if s.w == nil || !registered {
		return
	}
	os.Remove(s.w.procPath(s.pid))
	if s.elastic {
		s.removeKvcachedFiles()
	}
}

// removeKvcachedFiles is kvcached's cleanup at exit. The faults model the
// open upstream leaks: leak-segment is kvcached#477, leak-socket-dir #476,
// and kill-children the leak inferred for SGLang: its launcher ends with
// `finally: kill_process_tree(os.getpid(), include_parent=False)`
// (sgl-project/sglang python/sglang/launch_server.py@046a9e4088f7), which
// SIGKILLs its children, the scheduler among them (sglang #16484: "SIGKILL
// bypasses" atexit handlers and C++ destructors; #28089: SIGKILL "skips
// every Python-level shared-memory unlink path"), and the scheduler is the
// process that holds kvcached's segment, which kvcached unlinks only in
// MemInfoTracker's destructor and its Python atexit handler
// (csrc/inc/mem_info_tracker.hpp@e8e640638ba7 l.173, l.222-225;
// kvcached/mem_info_tracker.py@e8e640638ba7 l.41, l.93-103). vLLM stops its
// engine core without SIGKILL, so kill-children changes no vLLM server.
func (s *simServer) removeKvcachedFiles() {
	switch {
	case s.faults.has(FaultLeakSegment, s.ids...):
		s.log.kvcached("WARNING: leaving shared memory segment %s behind (fault leak-segment)", s.ipc)
	case s.cfg.Engine == "sglang" && s.faults.has(FaultKillChildren, s.ids...):
		s.log.kvcached("WARNING: leaving shared memory segment %s behind: the launcher killed its children with SIGKILL (fault kill-children)", s.ipc)
	default:
		names := []string{s.ipc}
		if s.grouped {
			names = append(names, s.groupIPC())
		}
		if err := s.w.lock.Lock(); err == nil {
			for _, n := range names {
				os.Remove(s.w.segmentPath(n))
			}
			s.w.lock.Unlock()
		}
		for _, n := range names {
			os.Remove(filepath.Join(ShmDir(s.w.dir), n))
		}
		s.log.kvcached("removed shared memory segment %s", s.ipc)
	}
	if s.faults.has(FaultLeakSocketDir, s.ids...) {
		if makesSocketDir(s.cfg.Engine, s.cfg.TP) {
			s.log.kvcached("WARNING: leaving socket dir %s behind (fault leak-socket-dir)", socketDirName(s.ipc))
		}
		return
	}
	os.RemoveAll(s.w.socketDir(s.ipc))
}

// crash makes the engine die with a traceback and exit at once, after
// kvcached's atexit cleanup: by the time a client notices, it is dead.
func (s *simServer) crash(inflight int) {
	s.crashOnce.Do(func() {
		s.log.write(s.log.errw, fmt.Sprintf("ERROR %s [core.py:710] EngineCore encountered a fatal error with %d requests in flight.", s.now().Format("01-02 15:04:05"), inflight))
		s.log.traceback([]string{
			`File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 701, in run_engine_core`,
			`  engine_core.run_busy_loop()`,
			`File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 728, in run_busy_loop`,
			`  self._process_engine_step()`,
			`File "/usr/local/lib/python3.12/dist-packages/kvcached/vmm_ops.py", line 88, in map_to_kv_tensors`,
			`  _vmm.map_pages(offsets)`,
		}, "RuntimeError: CUDA error: an illegal memory access was encountered (fault crash-in-burst)")
		close(s.dead)
		s.cleanup(true)
		s.exit(1)
	})
}

// pyException is an engine's start-up failure, worded as the Python
// exception the real engine raises (so it ends in a period).
type pyException string

func (e pyException) Error() string { return string(e) }

func pyExc(format string, a ...any) error { return pyException(fmt.Sprintf(format, a...)) }

// statsLoop logs the engine's periodic stats line while it has work.
func (s *simServer) statsLoop(stop <-chan struct{}) {
	t := time.NewTicker(scaled(statsPeriod, s.scale, 20*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		prompt, cached, gen := s.statPrompt, s.statCached, s.statGen
		running, waiting := s.running, len(s.waiters)
		tokens := s.kv.live + s.kv.cached
		usage := float64(tokens) / float64(s.kv.capacityTokens) * 100
		s.statPrompt, s.statCached, s.statGen = 0, 0, 0
		s.mu.Unlock()
		if prompt == 0 && gen == 0 && running == 0 && waiting == 0 {
			continue
		}
		secs := statsPeriod.Seconds() // the engine's own clock runs at scale 1
		hit := 0.0
		if prompt > 0 {
			hit = float64(cached) / float64(prompt) * 100
		}
		if s.cfg.Engine == "vllm" {
			s.log.info("loggers.py:123", "Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %.1f%%, Prefix cache hit rate: %.1f%%",
				float64(prompt)/secs, float64(gen)/secs, running, waiting, usage, hit)
		} else {
			s.log.info("scheduler.py:1421", "Decode batch. #running-req: %d, #token: %d, token usage: %.2f, gen throughput (token/s): %.2f, #queue-req: %d",
				running, tokens, usage/100, float64(gen)/secs, waiting)
		}
	}
}
