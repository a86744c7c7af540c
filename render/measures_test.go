package render

import (
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// kvcrReport is a KVCR-like part (issue 11): TC-05 with client-side TTFT
// and TPOT per arm and concurrency, TC-06 with its recovery events, and a
// case whose metrics cannot be read.
func kvcrReport(t *testing.T) *merge.Report {
	rep := sampleReport(t)
	rep.Cases = []merge.Case{
		{Name: "TC-05", OK: true, Checks: []collect.Check{}, Part: "kvcr", Log: []byte(`{"metrics":[` +
			`{"name":"ttft","value":664,"unit":"ms","arm":"cold","concurrency":1,"better":"lower"},` +
			`{"name":"ttft","value":412,"unit":"ms","arm":"local","concurrency":1,"better":"lower"},` +
			`{"name":"ttft","value":1200,"unit":"ms","arm":"cold","concurrency":8,"better":"lower"},` +
			`{"name":"ttft","value":null,"unit":"ms","arm":"remote","concurrency":8,"better":"lower"},` +
			`{"name":"ttft","value":1380,"unit":"ms","arm":"local","concurrency":8,"better":"lower"},` +
			`{"name":"ttft","value":999,"unit":"ms","arm":"local","concurrency":8,"better":"lower"},` +
			`{"name":"tpot","value":20,"unit":"ms","arm":"cold"},` +
			`{"name":"tpot","value":20,"unit":"ms","arm":"dram"}]}`)},
		{Name: "TC-06", OK: true, Checks: []collect.Check{}, Part: "kvcr", Log: []byte(`{"events":[{"name":"engine_killed","t":100.0},{"name":"guard_served","t":101.4},{"name":"replacement_serving","t":106.2}]}`)},
		{Name: "TC-07", OK: true, Checks: []collect.Check{}, Part: "kvcr", Log: []byte(`{"events":[{"name":"engine_killed","t":0}]}`)},
		{Name: "TC-08", OK: true, Checks: []collect.Check{}, Part: "kvcr", Log: []byte(`{"metrics":[{"name":"ttft","value":1,"arm":"cold"},{"name":"ttft","value":"fast","arm":"local"}]}`)},
	}
	rep.Verdict = "PASS"
	return rep
}

func kvcrOptions() Options {
	opts := sampleOptions()
	opts.BaselineArm = "cold"
	opts.Config.Intervals = []Interval{
		{Label: "guard served", From: "engine_killed", To: "guard_served"},
		{Label: "replacement", From: "engine_killed", To: "replacement_serving"},
	}
	return opts
}

func TestMetricTablesAndIntervals(t *testing.T) {
	docs := mustRender(t, kvcrReport(t), kvcrOptions())
	for _, want := range []string{
		"Metrics of `TC-05` against cold:",
		"`ttft` (ms, lower is better)\n\n| arm | c1 | c8 |\n|---|---|---|\n" +
			"| cold (baseline) | 664 ms | 1200 ms |\n" +
			"| local | 412 ms (−38%) | 1380 ms (+15%) |\n" +
			"| remote | | unknown |",
		"`tpot` (ms)\n\n| arm | value |\n|---|---|\n| cold (baseline) | 20 ms |\n| dram | 20 ms (±0%) |",
		"**Recovery timings**\n\n- `TC-06`: guard served after 1.4 s, replacement after 6.2 s.\n- `TC-07`: guard served: no `guard_served` event, replacement: no `replacement_serving` event.",
		"Metrics or events left out, as they could not be read: part kvcr, case TC-08: log.metrics\\[1\\].value: \"fast\": want a number or null; " +
			"part kvcr, case TC-05: log.metrics\\[5\\]: a second value of ttft for arm local at concurrency 8; the first is shown.",
	} {
		if !strings.Contains(docs.Comment, want) {
			t.Errorf("comment lacks %q:\n%s", want, docs.Comment)
		}
	}
	if again := mustRender(t, kvcrReport(t), kvcrOptions()); again.Comment != docs.Comment {
		t.Errorf("a second render differs")
	}
	// Without a baseline arm or intervals, nothing of it is drawn.
	plain := mustRender(t, kvcrReport(t), sampleOptions())
	if strings.Contains(plain.Comment, "Metrics of") || strings.Contains(plain.Comment, "Recovery") {
		t.Errorf("measures drawn unasked:\n%s", plain.Comment)
	}
}

func TestMetricTablesHostile(t *testing.T) {
	rep := kvcrReport(t)
	rep.Cases = []merge.Case{{Name: "huge", OK: true, Checks: []collect.Check{}, Part: "p", Log: []byte(`{"metrics":[` +
		`{"name":"x","value":1e-300,"arm":"cold"},{"name":"x","value":1e300,"arm":"warm"},` +
		`{"name":"y","value":0,"arm":"cold"},{"name":"y","value":5,"arm":"warm"},` +
		`{"name":"z","value":-1,"arm":"cold"},{"name":"z","value":5,"arm":"warm"}]}`)}}
	docs := mustRender(t, rep, kvcrOptions())
	for _, want := range []string{
		"| cold (baseline) | 1e-300 |\n| warm | 1e+300 |", // a ratio beyond any percentage: no delta
		"| cold (baseline) | 0 |\n| warm | 5 |",           // against 0: no delta
		"| cold (baseline) | unknown |\n| warm | 5 |",     // against unknown: no delta
	} {
		if !strings.Contains(docs.Comment, want) {
			t.Errorf("comment lacks %q:\n%s", want, docs.Comment)
		}
	}
	if strings.Contains(docs.Comment, "Inf") || strings.Contains(docs.Comment, "NaN") {
		t.Errorf("a non-finite number reached the comment:\n%s", docs.Comment)
	}
}

func TestArmOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"duplicate arm", func(o *Options) { o.Arms = []string{"a", "a"} }, `arm "a" is given twice`},
		{"unknown expect arm", func(o *Options) { o.Arms = []string{"a"}; o.Expect = map[string]string{"b": "pass"} }, `expected result of arm "b"`},
		{"bad interval", func(o *Options) { o.Config.Intervals = []Interval{{Label: "x", From: "a"}} }, "config intervals[0]: want a label, a from and a to event"},
		{"bad baseline", func(o *Options) { o.BaselineArm = "Cold!" }, `baseline arm "Cold!"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := sampleOptions()
			tc.edit(&opts)
			_, err := Render(kvcrReport(t), opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {412, "412"}, {-3, "-3"}, {1.4, "1.4"}, {18234.5, "18234.5"}, {0.12345, "0.123"}, {1e-7, "1e-07"}, {1e20, "1e+20"}, {2.0000001, "2"}} {
		if got := formatNumber(tc.v); got != tc.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestArmBlocksFitTheBudget: hundreds of cases with long names, many
// metrics and events on 8 arms still give a comment within CommentBudget,
// the rest counted.
func TestArmBlocksFitTheBudget(t *testing.T) {
	rep := sampleReport(t)
	rep.Cases = nil
	long := strings.Repeat("n", 300)
	var metrics, events []string
	for i := 0; i < 40; i++ {
		metrics = append(metrics, `{"name":"`+long+itoa(i)+`","value":`+itoa(i)+`,"unit":"`+long+`","arm":"a`+itoa(i%14)+`","concurrency":`+itoa(i%13)+`}`,
			`{"name":"`+long+itoa(i)+`","value":1,"unit":"u"}`)
		events = append(events, `{"name":"e`+itoa(i)+`","t":`+itoa(i)+`}`)
	}
	log := []byte(`{"metrics":[` + strings.Join(metrics, ",") + `],"events":[` + strings.Join(events, ",") + `]}`)
	arms := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	for i := 0; i < 400; i++ {
		rep.Cases = append(rep.Cases, merge.Case{Name: long + itoa(i), OK: i%2 == 0, Checks: []collect.Check{{Name: "c", OK: i%2 == 0, Detail: long}},
			Part: "p", Arm: arms[i%8], Log: log})
	}
	rep.Verdict = "FAIL (200 of 400 cases)"
	opts := kvcrOptions()
	opts.Arms = arms
	opts.BaselineArm = "a0"
	opts.Config.Intervals = nil
	for i := 0; i < 8; i++ {
		opts.Config.Intervals = append(opts.Config.Intervals, Interval{Label: long, From: "e0", To: "e" + itoa(i+1)})
	}
	docs := mustRender(t, rep, opts)
	if n := runeCount(docs.Comment); n > CommentBudget {
		t.Fatalf("comment of %d code points, over %d", n, CommentBudget)
	}
	// The failed-cases table keeps its 30 rows: the arm blocks do not
	// crowd it out (unbounded, they left it 24).
	if n := strings.Count(docs.Comment, " | unclassified |"); n != 30 {
		t.Errorf("%d failed rows, want 30", n)
	}
	for _, want := range []string{"more cases that do not pass on every arm or carry metrics.", "And ", "more cases with events."} {
		if !strings.Contains(docs.Comment, want) {
			t.Errorf("comment lacks %q", want)
		}
	}
}
