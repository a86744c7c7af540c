package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/runner"
)

var classifyCommand = command{
	Name:    "classify",
	Summary: "say whose fault a failed case is from its serve.log (and kernel log), as the runner decides it",
	Usage:   "classify [--native] [--kernel-log FILE] [--gpu-holders PID:MiB,...] [--native-started] [--fact KEY=VALUE]... SERVE_LOG|-",
	Examples: []string{
		"ci-report classify part/vllm-qwen05b-kv/serve.log",
		"ci-report classify --native --kernel-log dmesg.txt part/vllm-qwen05b-native/serve.log",
		"ci-report classify --gpu-holders 4182:20480 part/vllm-qwen05b-kv/serve.log",
		"ci-report classify --fact plan-model=Qwen/Qwen2.5-0.5B --fact port-holder=case part/vllm-qwen05b-kv/serve.log",
	},
	New: func() commandOptions { return &classifyOptions{} },
}

// classifyOptions are the flags of `ci-report classify` (docs/runner.md
// §1.7): the facts the runner would have had besides the logs.
type classifyOptions struct {
	lc                              runner.LogCase // its logs opened by run
	kernelLog, gpuHolders, serveLog string
}

func (o *classifyOptions) bind(fs *flag.FlagSet) {
	fs.BoolVar(&o.lc.Native, "native", false, "the case ran without kvcached (a native case): its default class is infra, not product")
	fs.StringVar(&o.kernelLog, "kernel-log", "", "the kernel's messages written while the case ran (`file`, e.g. from dmesg)")
	fs.StringVar(&o.gpuHolders, "gpu-holders", "", "`list` of processes that held GPU memory when the server started, PID:MiB comma-separated: a memory refusal is then infra")
	fs.BoolVar(&o.lc.GPU.NativeStarted, "native-started", false, "the case's native twin started its server on the same GPU: a memory refusal is then product")
	fs.Func("fact", "a `KEY=VALUE` the runner would have known (repeatable): server-port=N, port-holder=foreign|case, plan-model=ID, oom-victim=foreign|case, oom-invoker=foreign|case, host-memory-short=yes, machine=WHAT went bad, gpu-visible=yes", func(s string) error {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%s: want KEY=VALUE, KEY one of %s", bounds.Quote(s), strings.Join(runner.FactKeys, ", "))
		}
		return o.lc.Facts.Set(key, value)
	})
}

func (o *classifyOptions) setArgs(pos []string) error {
	if len(pos) != 1 {
		return usageErrorf("classify takes one SERVE_LOG (a file, or - for stdin), got %d arguments", len(pos))
	}
	o.serveLog = pos[0]
	if o.gpuHolders != "" {
		var err error
		if o.lc.GPU.Holders, err = runner.ParseGPUHolders(o.gpuHolders); err != nil {
			return usageErrorf("--gpu-holders: %v", err)
		}
	}
	if o.lc.Native && o.lc.GPU.NativeStarted {
		return usageErrorf("--native-started describes a kvcached case's native twin; a --native case has none")
	}
	return nil
}

// classifyResult is the command's one JSON object: null signature and line
// when no signature decided; decided_by says what did (fact, signature or
// default: docs/runner.md §1.7).
type classifyResult struct {
	Class     string  `json:"class"`
	DecidedBy string  `json:"decided_by"`
	Signature *string `json:"signature"`
	Line      *string `json:"line"`
	Why       string  `json:"why"`
}

func (o *classifyOptions) run(_ context.Context, e *env) error {
	serve, err := openLogArg(o.serveLog, e.Stdin)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer serve.Close()
	lc := o.lc
	lc.ServeLog = serve
	if o.kernelLog != "" {
		f, err := safefile.Open(o.kernelLog)
		if err != nil {
			return usageErrorf("--kernel-log: %v", err)
		}
		defer f.Close()
		lc.KernelLog = f
	}
	v, err := runner.ClassifyLogs(lc)
	if err != nil {
		return usageErrorf("%s: %v", o.serveLog, err)
	}
	res := classifyResult{Class: v.Class, DecidedBy: v.By, Why: v.Why}
	if v.Signature != "" {
		line := e.redactor().String(v.Line)
		res.Signature, res.Line = &v.Signature, &line
	}
	return json.NewEncoder(e.Stdout).Encode(res) // one line, as json.Marshal writes it
}

// openLogArg opens a log named on the command line (- is stdin) through
// safefile; it is streamed in bounded memory, so no size cap applies.
func openLogArg(name string, stdin io.Reader) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(stdin), nil
	}
	f, err := safefile.Open(name)
	if err != nil {
		return nil, err // not f: a nil *os.File would be a non-nil ReadCloser
	}
	return f, nil
}
