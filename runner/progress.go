package runner

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/text"
)

// DefaultHeartbeat is the period of the heartbeat lines (docs/runner.md
// §1.4): real time, under --simulate too, since they are for the person
// watching the job.
const DefaultHeartbeat = 30 * time.Second

// runProgress is what `run` shows of its progress (docs/runner.md §1.4). Its
// state is under Runner.progMu, which every progress write takes.
type runProgress struct {
	r *Runner
	// out gets plain lines (stderr and run.log); log only run.log, for
	// what stderr shows as a live line on a terminal.
	out, log io.Writer
	actions  bool
	total    int
	index    map[string]int // case name → its place in the plan, from 1
	notRun   map[string]string
	stop     func() // ends the heartbeat; it writes no line afterwards

	current         string // the running case, "" between cases
	caseAt, phaseAt time.Time
	phase           string
}

// startProgress starts the progress of a run of r.Plan and its heartbeat.
func (r *Runner) startProgress(out, log io.Writer) *runProgress {
	p := &runProgress{
		r: r, out: out, log: log, actions: r.getenv("GITHUB_ACTIONS") == "true",
		total: len(r.Plan.Cases), index: map[string]int{}, notRun: map[string]string{},
	}
	for i := range r.Plan.Cases {
		p.index[r.Plan.Cases[i].Name] = i + 1
	}
	every := cmp.Or(max(r.Heartbeat, 0), DefaultHeartbeat)
	ticker := r.NewTicker
	if ticker == nil {
		ticker = newTicker
	}
	p.stop = onTicks(ticker, every, p.beat)
	return p
}

// tag is `[i/N] <case>`.
func (p *runProgress) tag(name string) string {
	return fmt.Sprintf("[%d/%d] %s", p.index[name], p.total, name)
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// start opens case e: its start line (on GitHub Actions inside its
// `::group::`) and the heartbeat's subject.
func (p *runProgress) start(e *Entry) {
	now := p.r.now()
	p.r.progMu.Lock()
	defer p.r.progMu.Unlock()
	if p.actions {
		fmt.Fprintf(p.r.stderr(), "::group::%s\n", p.tag(e.Name))
	}
	fmt.Fprintf(p.out, "%s %s: started (%s)\n", clock(now), p.tag(e.Name), e.Kind)
	p.current, p.caseAt, p.phaseAt, p.phase = e.Name, now, now, "starting"
}

// end closes the running case: no more heartbeats for it.
func (p *runProgress) end() {
	p.r.progMu.Lock()
	defer p.r.progMu.Unlock()
	p.current = ""
	if p.r.Terminal {
		fmt.Fprint(p.r.stderr(), "\r\033[K")
	}
	if p.actions {
		fmt.Fprintf(p.r.stderr(), "::endgroup::\n")
	}
}

// setPhase records the running case's phase and returns how its progress
// line names it: its tag, or only its name when it is not the running one (a
// case cut short by an interrupt, still stopping).
func (p *runProgress) setPhase(name, phase string, now time.Time) string {
	if name != p.current {
		return name
	}
	p.phase, p.phaseAt = phase, now
	return p.tag(name)
}

// beat writes the heartbeat line of tick t, when a case runs, on the tick's
// clock.
func (p *runProgress) beat(t time.Time) {
	p.r.progMu.Lock()
	defer p.r.progMu.Unlock()
	if p.current == "" {
		return
	}
	since := func(from time.Time) string { return max(t.Sub(from), 0).Round(time.Second).String() }
	line := fmt.Sprintf("%s %s: in %q for %s (case %s)", clock(t), p.tag(p.current), p.phase, since(p.phaseAt), since(p.caseAt))
	if p.r.Terminal { // the live line shows it; run.log gets it as a line
		fmt.Fprint(p.r.stderr(), "\r\033[K"+line)
		fmt.Fprintln(p.log, line)
		return
	}
	fmt.Fprintln(p.out, line)
}

// notRunLine writes the line of a case that did not run (NOT RUN (why),
// or what cut it short), and remembers why for the table.
func (p *runProgress) notRunLine(name, line, why string) {
	now := p.r.now()
	p.r.progMu.Lock()
	defer p.r.progMu.Unlock()
	p.notRun[name] = why
	fmt.Fprintf(p.out, "%s %s: %s\n", clock(now), p.tag(name), line)
}

// result writes the result line of a finished case.
func (p *runProgress) result(res *collect.CaseResult) {
	now := p.r.now()
	p.r.progMu.Lock()
	defer p.r.progMu.Unlock()
	word, detail := resultWord(res)
	if detail != "" {
		word += " (" + detail + ")"
	}
	fmt.Fprintf(p.out, "%s %s: %s\n", clock(now), p.tag(res.Name), word)
}

// resultWord is PASS, FLAKY, SKIP with its reason or FAIL with its failed
// checks.
func resultWord(res *collect.CaseResult) (word, detail string) {
	switch {
	case res.Failed():
		return "FAIL", strings.Join(failedCheckNames(res), ", ")
	case res.Skipped():
		return "SKIP", res.SkipReason
	case res.Flaky():
		return "FLAKY", ""
	}
	return "PASS", ""
}

// failedCheckNames names the failed checks of res; a case that failed
// without one says so rather than listing nothing.
func failedCheckNames(res *collect.CaseResult) []string {
	var names []string
	for _, ch := range res.Checks {
		if !ch.OK {
			names = append(names, ch.Name)
		}
	}
	if len(names) == 0 {
		names = append(names, collect.NoFailedCheck)
	}
	return names
}

// summary writes the closing table, one row per planned case, and on GitHub
// Actions an `::error` annotation per failed case; redacted, as stderr is not.
func (p *runProgress) summary(cases []collect.CaseResult, planned []string) {
	byName := map[string]*collect.CaseResult{}
	for i := range cases {
		byName[cases[i].Name] = &cases[i]
	}
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tcase\tresult\tduration\tfailed checks")
	var annotations []string
	for _, name := range planned {
		res, what, dur := byName[name], "NOT RUN", ""
		detail := p.notRun[name]
		if res != nil {
			what, detail = resultWord(res)
			dur = collect.FormatSeconds(res.DurationS)
			if res.Failed() {
				annotations = append(annotations, annotation(name, res, p.r.Redactor()))
			}
		}
		fmt.Fprintf(tw, "%d/%d\t%s\t%s\t%s\t%s\n", p.index[name], p.total, name, what, dur, text.Words(detail))
	}
	tw.Flush()
	// tabwriter pads a row's empty last cell; a line ends at its text.
	rows := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	red := p.r.Redactor()
	p.r.progMu.Lock()
	defer p.r.progMu.Unlock()
	fmt.Fprintln(p.out, red.String(strings.Join(rows, "\n")))
	if p.actions {
		for _, a := range annotations {
			fmt.Fprintln(p.r.stderr(), a)
		}
	}
}

// annotation is the workflow command that marks a failed case on the run's
// page. Redacted before it is escaped: escaped, a secret holding `%` or `,`
// would no longer match.
func annotation(name string, res *collect.CaseResult, red *collect.Redactor) string {
	var lines []string
	for _, ch := range res.Checks {
		if !ch.OK {
			l := ch.Name
			if ch.Detail != "" {
				l += ": " + text.CutLine(ch.Detail, 300)
			}
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		lines = failedCheckNames(res)
	}
	return collect.WorkflowCommand("error", [][2]string{{"title", red.String(name)}}, red.String(strings.Join(lines, "\n")))
}
