package treegen

import (
	"math"
	"path/filepath"
	"strconv"
)

var h100 = []obj{{{"name", "NVIDIA H100 80GB HBM3"}, {"memory", "81559 MiB"}, {"driver", "580.95.05"}}}

// perf is a perf root (docs/formats.md §6): perf/setup.json, perf/summary.json and
// the Hopper correctness part e2e/. Both native runs of qwen38_27b at
// concurrency 128 failed, so that row has no native value and no ratios.
func perf() scenario {
	e2e := []item{setupCase("vllm"), server("vllm", "qwen38_27b", "c1")}
	return scenario{
		Name:  "perf",
		About: "Weekly performance root: perf/setup.json and perf/summary.json (two models, arms native/kvcached/kvcached/native, concurrency 1, 32, 128; both native runs of qwen38_27b at concurrency 128 failed, so two errors and a row without native values), and e2e/, the Hopper correctness part (hopper profile, passing).",
		Parts: []partDef{{Dir: "e2e", Profile: "hopper", RunID: "11291000", SHA: shaMain, GPUs: h100, Mode: modeComplete, Items: e2e, Start: day.Add(22 * 3600e9)}},
		Extra: map[string]string{"nvidia-smi.txt": nvidiaSMI("NVIDIA H100 80GB HBM3", "81559MiB")},
		Writer: func(root string) {
			writeFile(filepath.Join(root, "perf", "setup.json"), indentJSON(perfSetup()))
			writeFile(filepath.Join(root, "perf", "summary.json"), indentJSON(perfSummary()))
		},
	}
}

var perfModels = []string{"qwen35_9b", "qwen38_27b"}

var perfConcurrency = []struct {
	C       int
	Prompts int
}{{1, 16}, {32, 320}, {128, 640}}

func perfSetup() obj {
	ms := obj{}
	for _, k := range perfModels {
		m := models[k]
		ms = append(ms, kv{k, obj{{"hf_id", m.HF}, {"revision", m.Rev},
			{"args", []string{"--dtype", "bfloat16", "--max-model-len", "8192", "--gpu-memory-utilization", m.Mem["vllm"]}}}})
	}
	conc := obj{}
	for _, c := range perfConcurrency {
		conc = append(conc, kv{strconv.Itoa(c.C), c.Prompts})
	}
	return obj{
		{"kvcached_sha", shaMain}, {"gpus", h100},
		{"versions", obj{{"vllm", "0.30.0"}, {"kvcached", "0.1.6"}, {"torch", "2.13.0"}, {"cuda", "13.0"}}},
		{"models", ms},
		{"server", "vllm serve <hf_id> --served-model-name e2e --host 127.0.0.1 --port 18000 --seed 42 --enable-prefix-caching"},
		{"kvcached_env", obj{{"ENABLE_KVCACHED", "true"}, {"KVCACHED_AUTOPATCH", "1"}, {"KVCACHED_CONTIGUOUS_LAYOUT", "true"}}},
		{"bench", obj{{"tool", "vllm bench serve"}, {"dataset", "random"}, {"input_len", 1024}, {"output_len", 256}, {"seed", 0}}},
		{"arms", []string{"native", "kvcached", "kvcached", "native"}},
		{"concurrency", conc},
		{"warmup", obj{{"concurrency", 8}, {"prompts", 32}}},
	}
}

type perfPoint struct {
	tput, ttft, tpot, p99tpot float64
}

// point is the measurement of one run at one concurrency; ok is false for
// the failed runs.
func point(model, arm string, run, c int) (perfPoint, bool) {
	if model == "qwen38_27b" && arm == "native" && c == 128 {
		return perfPoint{}, false
	}
	r := newRNG(model + "/" + arm + "/" + strconv.Itoa(run) + "/" + strconv.Itoa(c))
	scale := 1.0
	if model == "qwen38_27b" {
		scale = 0.31
	}
	armF := 1.0
	if arm == "kvcached" {
		armF = 0.97
	}
	jit := 1 + float64(r.intn(200)-100)/10000
	base := []float64{1: 98, 32: 2350, 128: 5120}[c]
	tput := math.Round(base*scale*armF*jit*100) / 100
	tpot := math.Round(1000/(base/float64(c)*scale*armF*jit)*100) / 100
	return perfPoint{tput, math.Round((40+float64(c)*1.7/scale/armF)*jit*100) / 100, tpot, math.Round(tpot*1.31*100) / 100}, true
}

func perfSummary() obj {
	var runs []obj
	var errs []string
	for _, m := range perfModels {
		for i, arm := range []string{"native", "kvcached", "kvcached", "native"} {
			run := i/2 + 1 // each arm's first run, then its second
			o := obj{{"model", m}, {"arm", arm}, {"run", run}}
			for _, c := range perfConcurrency {
				p, ok := point(m, arm, run, c.C)
				if !ok {
					errs = append(errs, m+" "+arm+" run "+strconv.Itoa(run)+", concurrency 128: server exited with code 137 during the benchmark (killed by the OOM killer); see perf/"+m+"-"+arm+"-"+strconv.Itoa(run)+"/serve.log")
					continue
				}
				o = append(o, kv{"c" + strconv.Itoa(c.C), obj{
					{"request_throughput", math.Round(p.tput/256*1000) / 1000}, {"output_throughput", p.tput},
					{"mean_ttft_ms", p.ttft}, {"median_ttft_ms", math.Round(p.ttft*0.93*100) / 100}, {"p99_ttft_ms", math.Round(p.ttft*2.4*100) / 100},
					{"mean_tpot_ms", p.tpot}, {"median_tpot_ms", math.Round(p.tpot*0.98*100) / 100}, {"p99_tpot_ms", p.p99tpot},
					{"peak_gpu_mib", 70100 + c.C*3},
				}})
			}
			idle := 1210
			if arm == "kvcached" {
				idle = 1530
			}
			if m == "qwen38_27b" {
				idle += 51000
			}
			o = append(o, kv{"idle_gpu_mib", idle + run*4}, kv{"after_load_gpu_mib", 74210 + run*8})
			runs = append(runs, o)
		}
	}
	var table []obj
	for _, m := range perfModels {
		for _, c := range perfConcurrency {
			for _, metric := range []string{"output_throughput", "mean_tpot_ms", "p99_tpot_ms", "mean_ttft_ms"} {
				nat, kvc := median(m, "native", c.C, metric), median(m, "kvcached", c.C, metric)
				var ratio any
				if nat != nil && kvc != nil {
					ratio = math.Round(*kvc / *nat * 10000) / 10000
				}
				table = append(table, obj{{"model", m}, {"concurrency", c.C}, {"metric", metric},
					{"native", nat}, {"kvcached", kvc}, {"ratio", ratio}})
			}
		}
	}
	return obj{{"runs", runs}, {"table", table}, {"errors", errs}}
}

// median is the median of the arm's two runs (their mean), or nil when no
// run measured it.
func median(model, arm string, c int, metric string) *float64 {
	var sum float64
	n := 0
	for run := 1; run <= 2; run++ {
		if p, ok := point(model, arm, run, c); ok {
			sum += map[string]float64{"output_throughput": p.tput, "mean_tpot_ms": p.tpot, "p99_tpot_ms": p.p99tpot, "mean_ttft_ms": p.ttft}[metric]
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m := math.Round(sum/float64(n)*100) / 100
	return &m
}
