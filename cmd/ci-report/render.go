package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ovg-project/ci-report/internal/bounds"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
	"golang.org/x/term"
)

var renderCommand = command{
	Name:    "render",
	Summary: "render the run's comment, issue section, HTML preview or terminal tables",
	Usage:   "render [flags] <part dirs or artifact roots... | merged.json>",
	Examples: []string{
		"ci-report render --format text results/",
		"ci-report render --comment comment.md --section section.md --html preview.html --date 2026-11-28 --run-id 4242 merged.json",
		"ci-report render --history history.jsonl --arms parent,fix --expect parent=fail,fix=pass results/",
	},
	New: func() commandOptions { return &renderOptions{} },
}

// jobSummaryLimit is what GitHub accepts in one step's job summary.
const jobSummaryLimit = 1 << 20

// renderOptions are the flags of `ci-report render` besides the shared inputs.
type renderOptions struct {
	inputs      renderInputs
	comment     string
	section     string
	html        string
	format      string
	jobSummary  bool
	fail        failOn
	history     string
	width       int
	termWidth   int // the columns of the terminal stdout is, 0 for none
	positionals []string
}

func (o *renderOptions) bind(fs *flag.FlagSet) {
	o.inputs.bind(fs)
	fs.StringVar(&o.comment, "comment", "", "write the comment to `file` (default: stdout)")
	fs.StringVar(&o.section, "section", "", "write the issue-description section to `file`; removed when there is none")
	fs.StringVar(&o.html, "html", "", "write an HTML preview of the comment and section to `file`")
	fs.StringVar(&o.format, "format", "md", "stdout `format`: md (the comment), text (aligned tables), junit (JUnit XML) or ctrf (CTRF JSON)")
	fs.BoolVar(&o.jobSummary, "job-summary", false, "append the comment to $GITHUB_STEP_SUMMARY (within 1 MiB)")
	o.fail.bind(fs, "")
	fs.IntVar(&o.width, "width", 0, "--format text: at most this many `columns` a line, tables reflowed to fit (default: the terminal's width, else $COLUMNS, else 120)")
	fs.StringVar(&o.history, "history", "", "earlier runs' digests `file` (JSON lines, as post --save-history writes): the since column, fixed line and changes table")
}

func (o *renderOptions) setArgs(pos []string) error {
	o.positionals = pos
	switch o.format {
	case "md", "text", "junit", "ctrf":
	default:
		return usageErrorf("--format %s: want md, text, junit or ctrf", bounds.Quote(o.format))
	}
	if err := o.fail.check(); err != nil {
		return err
	}
	if err := bounds.Int("--width", o.width, render.MinTextWidth, render.MaxTextWidth); o.width != 0 && err != nil {
		return usageErrorf("%v", err)
	}
	return o.inputs.check(pos)
}

// run renders, with what reaches stdout and stderr redacted (the documents
// by render itself), as post's.
func (o *renderOptions) run(ctx context.Context, e *env) error {
	if f, ok := e.Stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.termWidth, _, _ = term.GetSize(int(f.Fd()))
	}
	red := e.redactor()
	stdout, stderr := red.Writer(e.Stdout), red.Writer(e.Stderr)
	err := o.render(ctx, &env{Stdin: e.Stdin, Stdout: stdout, Stderr: stderr, Getenv: e.Getenv, Environ: e.Environ, Sleep: e.Sleep})
	return redactError(cmp.Or(err, errors.Join(stdout.Close(), stderr.Close())), red)
}

func (o *renderOptions) render(ctx context.Context, e *env) error {
	o.inputs.keepLogs = o.format == "junit"
	rep, opts, err := o.inputs.load(ctx, e, o.positionals)
	if err != nil {
		return err
	}
	if o.history != "" {
		if opts.History, err = readHistoryFile(o.history); err != nil {
			return err
		}
	}
	opts.Width = textWidth(o.width, o.termWidth, e.Getenv("COLUMNS"))
	opts.TextSection = o.section != ""
	docs, err := render.Render(rep, opts)
	if err != nil {
		return withCode(exitUsage, err)
	}
	for _, w := range docs.Warnings {
		fmt.Fprintf(e.Stderr, "ci-report render: warning: %s\n", text.Inert(w))
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err := o.writeFiles(docs, opts); err != nil {
		return err
	}
	if err := o.writeStdout(e.Stdout, rep, opts, docs); err != nil {
		return err
	}
	if o.jobSummary {
		if err := appendJobSummary(e, "render", docs.Comment); err != nil {
			return err
		}
	}
	return o.fail.result(docs)
}

// textWidth is the text view's width: --width, else the width of the
// terminal stdout is (termWidth, 0 when it is none: bash does not export
// $COLUMNS), else $COLUMNS, within render's bounds, else
// render.DefaultTextWidth (docs/render.md §8).
func textWidth(flagWidth, termWidth int, columns string) int {
	if flagWidth != 0 {
		return flagWidth
	}
	n, err := strconv.Atoi(strings.TrimSpace(columns))
	if termWidth > 0 {
		n, err = termWidth, nil
	}
	if err == nil && n > 0 {
		return min(max(n, render.MinTextWidth), render.MaxTextWidth)
	}
	return render.DefaultTextWidth
}

// writeFiles writes --comment, --section and --html.
func (o *renderOptions) writeFiles(docs render.Documents, opts render.Options) error {
	if o.comment != "" {
		if err := safefile.Write(o.comment, []byte(docs.Comment)); err != nil {
			return fmt.Errorf("--comment: %w", err)
		}
	}
	if o.section != "" {
		if docs.Section == "" { // a stale section from an earlier render must not be spliced
			if err := safefile.RemoveRegular(o.section); err != nil {
				return fmt.Errorf("--section: remove the stale section: %w", err)
			}
		} else if err := safefile.Write(o.section, []byte(docs.Section)); err != nil {
			return fmt.Errorf("--section: %w", err)
		}
	}
	if o.html != "" {
		page, err := render.HTML(docs, opts.Config.Title(opts.Profile))
		if err != nil {
			return err
		}
		if err := safefile.Write(o.html, page); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	return nil
}

// stdoutViews are the --format views besides md, and what each is called in errors.
var stdoutViews = map[string]struct {
	what  string
	write func(io.Writer, *merge.Report, render.Options) error
}{"text": {"terminal tables", render.Text}, "junit": {"JUnit XML", render.JUnit}, "ctrf": {"CTRF JSON", render.CTRF}}

// writeStdout prints the --format view, or the comment when it went to no
// file.
func (o *renderOptions) writeStdout(w io.Writer, rep *merge.Report, opts render.Options, docs render.Documents) error {
	if v, ok := stdoutViews[o.format]; ok {
		if err := v.write(w, rep, opts); err != nil {
			return fmt.Errorf("%s: %w", v.what, err)
		}
	} else if o.comment == "" {
		if _, err := io.WriteString(w, docs.Comment); err != nil {
			return fmt.Errorf("write comment to stdout: %w", err)
		}
	}
	return nil
}

// readHistoryFile reads a --history file (docs/formats.md §9); a line that
// is not a digest is a usage error naming the file and line.
func readHistoryFile(path string) ([]render.HistoryRun, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, usageErrorf("--history: %v", err)
	}
	defer f.Close()
	runs, err := render.ReadHistory(safefile.Limit(f, safefile.History))
	if err != nil {
		return nil, usageErrorf("--history %s: %v", path, err)
	}
	return runs, nil
}

// appendJobSummary appends the comment to $GITHUB_STEP_SUMMARY, or a short
// note when the comment would take the file over GitHub's 1 MiB. Its
// warnings name cmd, the subcommand that called it (render or post).
func appendJobSummary(e *env, cmd, comment string) error {
	warnf := func(format string, args ...any) {
		fmt.Fprintf(e.Stderr, "ci-report %s: warning: --job-summary: %s\n", cmd, text.Inert(fmt.Sprintf(format, args...)))
	}
	path := e.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		warnf("GITHUB_STEP_SUMMARY is not set; no job summary written")
		return nil
	}
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	text := "\n" + comment
	if size+int64(len(text)) > jobSummaryLimit {
		text = fmt.Sprintf("\nThe ci-report comment (%d bytes) does not fit in this job summary's 1 MiB; the results issue has it.\n", len(comment))
		if size+int64(len(text)) > jobSummaryLimit {
			warnf("the job summary is full; nothing appended")
			return nil
		}
		warnf("the comment does not fit in %s; a note was appended instead", path)
	}
	return wrapErr("job summary", safefile.Append(path, []byte(text)))
}

// appendStepOutputs appends name=value lines to the step's $GITHUB_OUTPUT
// file, in the form GitHub's workflow commands document ("Setting an output
// parameter": docs.github.com/en/actions/reference/workflow-commands-for-github-actions);
// a value holding a line break is written as a name<<DELIMITER block. Outside
// Actions (no GITHUB_OUTPUT) it warns and writes nothing.
func appendStepOutputs(e *env, cmd string, outputs [][2]string) error {
	path := e.Getenv("GITHUB_OUTPUT")
	if path == "" {
		fmt.Fprintf(e.Stderr, "ci-report %s: warning: --github-output: GITHUB_OUTPUT is not set; no step outputs written\n", cmd)
		return nil
	}
	var b strings.Builder
	for _, o := range outputs {
		if !strings.ContainsAny(o[1], "\r\n") {
			fmt.Fprintf(&b, "%s=%s\n", o[0], o[1])
			continue
		}
		delim := "ci_report_output"
		for strings.Contains(o[1], delim) {
			delim += "_"
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", o[0], delim, o[1], delim)
	}
	return wrapErr("step outputs", safefile.Append(path, []byte(b.String())))
}
