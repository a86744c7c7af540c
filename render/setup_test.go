package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

func strp(s string) *string { return &s }

func TestCaseFlags(t *testing.T) {
	for _, tc := range []struct {
		name         string
		model, extra []string
		want         string
	}{
		{"spec example", []string{"--dtype", "bfloat16", "--max-num-seqs", "32", "--trust-remote-code"}, []string{"--max-num-seqs", "128"},
			"--dtype bfloat16 --trust-remote-code --max-num-seqs 128"},
		{"no extra", []string{"--dtype", "bfloat16"}, nil, "--dtype bfloat16"},
		{"only extra", nil, []string{"--block-size", "1024"}, "--block-size 1024"},
		{"flag without value overridden", []string{"--enforce-eager", "--dtype", "half"}, []string{"--enforce-eager"}, "--dtype half --enforce-eager"},
		{"equals form", []string{"--max-model-len=4096", "--dtype", "half"}, []string{"--max-model-len", "8192"}, "--dtype half --max-model-len 8192"},
		{"none", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CaseFlags(tc.model, tc.extra); got != tc.want {
				t.Errorf("CaseFlags(%q, %q) = %q, want %q", tc.model, tc.extra, got, tc.want)
			}
		})
	}
}

func TestGPULine(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpus []collect.GPU
		want string
	}{
		{"none", nil, "GPU unknown"},
		{"two", []collect.GPU{{Name: "NVIDIA L4", Memory: "23034 MiB", Driver: "580.95.05"}, {Name: "NVIDIA L4"}}, "2x NVIDIA L4 (23034 MiB, driver 580.95.05)"},
		{"missing fields", []collect.GPU{{Name: "NVIDIA H100"}}, "1x NVIDIA H100 (?, driver ?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GPULine(tc.gpus); got != tc.want {
				t.Errorf("GPULine = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBriefEveryKind(t *testing.T) {
	ix := newSetupIndex(sampleReport(t).Setup, "kvcached")
	for _, tc := range []struct{ name, want string }{
		{"elastic-vllm-qwen05b+sglang-qwen35_4b", "vLLM Qwen/Qwen2.5-0.5B-Instruct + SGLang Qwen/Qwen3.5-4B on GPU 0, batch limit 128"},
		{"priority-vllm-qwen05b+vllm-qwen05b", "vLLM Qwen/Qwen2.5-0.5B-Instruct (priority 0) + vLLM Qwen/Qwen2.5-0.5B-Instruct (priority 1) on GPU 0, batch limit 128, ballast 2048 MiB"},
		{"limit-vllm-qwen05b", "vLLM 0.30.0, Qwen/Qwen2.5-0.5B-Instruct@aaaaaaa, kvcached, contiguous, TP 1, KV model dtype"},
		{"vllm-qwen05b-native", "vLLM 0.30.0, Qwen/Qwen2.5-0.5B-Instruct@aaaaaaa, native, TP 1, KV model dtype, `--block-size 1024`"},
		{"vllm-qwen05b-kv_c0", "vLLM 0.30.0, Qwen/Qwen2.5-0.5B-Instruct@aaaaaaa, kvcached, non-contiguous, TP 1, KV fp8"},
		{"sglang-qwen35_4b-kv_c1", "SGLang 0.5.0, Qwen/Qwen3.5-4B@unknown, kvcached, contiguous, TP 2, KV model dtype"},
		{"vllm-setup", ""},
		{"no-such-case", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ix.brief(tc.name); got != tc.want {
				t.Errorf("brief(%s) =\n %q\nwant\n %q", tc.name, got, tc.want)
			}
		})
	}
	// Without ballast, and with no setup at all.
	rep := sampleReport(t)
	rep.Setup.Kind("priority").Entries[0].BallastMiB = nil
	if got := newSetupIndex(rep.Setup, "kvcached").brief("priority-vllm-qwen05b+vllm-qwen05b"); got != "vLLM Qwen/Qwen2.5-0.5B-Instruct (priority 0) + vLLM Qwen/Qwen2.5-0.5B-Instruct (priority 1) on GPU 0, batch limit 128" {
		t.Errorf("priority brief without ballast: %q", got)
	}
	if got := newSetupIndex(nil, "kvcached").brief("vllm-qwen05b-native"); got != "" {
		t.Errorf("brief without setup: %q", got)
	}
}

func TestModelLink(t *testing.T) {
	rep := sampleReport(t)
	ix := newSetupIndex(rep.Setup, "kvcached")
	for _, tc := range []struct{ hf, want string }{
		{"Qwen/Qwen2.5-0.5B-Instruct", "`Qwen/Qwen2.5-0.5B-Instruct` @ [aaaaaaa](https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/tree/aaaaaaabbbbbbbcccccccddddddd111111122222)"},
		{"Qwen/Qwen3.5-4B", "`Qwen/Qwen3.5-4B`"},
		{"unknown/model", "`unknown/model`"},
	} {
		if got := ix.modelLink(tc.hf); got != tc.want {
			t.Errorf("modelLink(%s) = %q, want %q", tc.hf, got, tc.want)
		}
	}
}

func TestLayoutAndNames(t *testing.T) {
	for _, tc := range []struct {
		layout *string
		want   string
	}{{nil, "native"}, {strp("c1"), "kvcached, contiguous"}, {strp("c0"), "kvcached, non-contiguous"}, {strp("paged"), "kvcached, paged"}} {
		if got := LayoutLabel("kvcached", tc.layout); got != tc.want {
			t.Errorf("LayoutLabel = %q, want %q", got, tc.want)
		}
	}
	// A setup's own display name wins; a setup without one (older parts)
	// names the built-in engines, and leaves any other key as it is.
	withNames := &collect.Setup{}
	withNames.Engines.Set("trt", collect.Engine{Display: "TensorRT-LLM"})
	withNames.Engines.Set("vllm", collect.Engine{})
	for _, tc := range []struct {
		setup     *collect.Setup
		key, want string
	}{
		{nil, "vllm", "vLLM"}, {nil, "sglang", "SGLang"}, {nil, "trt", "trt"},
		{withNames, "trt", "TensorRT-LLM"}, {withNames, "vllm", "vLLM"}, {withNames, "other", "other"},
	} {
		if got := EngineDisplay(tc.setup, tc.key); got != tc.want {
			t.Errorf("EngineDisplay(%s) = %s, want %s", tc.key, got, tc.want)
		}
	}
	if ShortSHA("") != "unknown" || ShortSHA("0123456789") != "0123456" {
		t.Errorf("ShortSHA")
	}
}

// An engine release lane's report (profile <engine>-release, that engine
// alone) is titled by the release and its probes, the version guard's
// verdict first when the engine's setup case failed (docs/runner.md §2.8);
// the same setup under another profile keeps the configured title.
func TestReleaseTitle(t *testing.T) {
	t.Parallel()
	rep := sampleReport(t)
	e, _ := rep.Setup.Engines.Get("vllm")
	e.Engine = "0.33.0"
	rep.Setup.Engines = collect.Ordered[collect.Engine]{}
	rep.Setup.Engines.Set("vllm", e)
	rep.Cases = slices.DeleteFunc(rep.Cases, func(c merge.Case) bool { return !strings.HasPrefix(c.Name, "vllm-") })
	render := func(profile string) Documents {
		opts := sampleOptions()
		opts.Profile = profile
		docs, err := Render(rep, opts)
		if err != nil {
			t.Fatal(err)
		}
		return docs
	}
	docs := render("vllm-release")
	want := "vLLM 0.33.0 against kvcached 0123456: 2 of 3 probes pass"
	if !strings.HasPrefix(docs.Section, "## "+want+"\n") || !strings.Contains(docs.Comment, want+" · 2026-11-28 · ") {
		t.Errorf("section\n%s\ncomment\n%s\nwant both titled %q", docs.Section, docs.Comment, want)
	}
	rep.Cases[0].OK = false
	rep.Cases[0].Checks = []collect.Check{{Name: "expectations_matched", Detail: "kvcached disabled itself: vllm 0.33.0 is outside >=0.17,<0.31"}}
	want = "vLLM 0.33.0 against kvcached 0123456: vllm-setup failed: kvcached disabled itself: vllm 0.33.0 is outside >=0.17,<0.31; 2 of 3 probes pass"
	if docs := render("vllm-release"); !strings.HasPrefix(docs.Section, "## "+strings.NewReplacer(">", `\>`, "<", `\<`).Replace(want)+"\n") {
		t.Errorf("section\n%s\nwant it titled %q", docs.Section, want)
	}
	if docs := render("weekly"); !strings.HasPrefix(docs.Section, "## Weekly correctness\n") {
		t.Errorf("weekly section\n%s", docs.Section)
	}
}
