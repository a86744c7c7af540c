package collect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// Status says how far a part got (docs/formats.md §1.3).
type Status string

// The statuses of a part (docs/formats.md §1.3).
const (
	StatusComplete Status = "complete"
	StatusPartial  Status = "partial"
	StatusMissing  Status = "missing"
)

// ReasonNotFound is the Reason of a part whose directory does not exist;
// ReasonNoPartFiles of a directory that holds none of the part files.
const (
	ReasonNotFound    = "not found"
	ReasonNoPartFiles = "no part files"
)

// partFiles are the files whose presence makes a directory a part.
var partFiles = []string{"part.json", "setup.json", "summary.json", "cases.jsonl", "run.log", "error.txt"}

// Part is one part directory as read from disk, with how far it got.
type Part struct {
	Dir     string // the part's directory as found (it may not exist)
	Name    string // part.json's "part", else the directory name
	Display string // the name shown in reports (DisplayName)
	// Status and Reason say how far the part got; Reason is empty for a
	// complete part.
	Status Status
	Reason string
	// ErrorTxt is set when the part holds error.txt. Its text is never
	// read: it may hold provider details that must not reach a report.
	ErrorTxt bool
	// Meta and Setup are part.json and setup.json; nil when absent or
	// unreadable.
	Meta       *PartMeta
	Setup      *Setup
	HasSummary bool // summary.json was read
	// Cases are the finished cases in execution order, without phases:
	// from summary.json, else from cases.jsonl.
	Cases      []CaseResult
	Deselected *int     // summary.json's deselected count of an imported part
	Planned    []string // the case names of part.json's plan; nil without one
	// Problems are defects of the part's files that did not stop it from
	// being read, each naming the file (relative to Dir) and the field.
	Problems  []Problem
	logsClean bool // see LogsClean
}

// LogsClean reports whether every case's Log is valid JSON, compact and
// in valid UTF-8, as LoadPartsWith reads them, so that merge need not
// compact it again.
func (p *Part) LogsClean() bool { return p.logsClean }

// DisplayName is the report name of a part, and of the engines of setups
// that give none (docs/formats.md §3.1).
func DisplayName(name string) string {
	switch name {
	case "vllm":
		return "vLLM"
	case "sglang":
		return "SGLang"
	}
	return name
}

// IsPartDir reports whether dir holds any of the files that make a part.
func IsPartDir(dir string) bool {
	return slices.ContainsFunc(partFiles, func(f string) bool {
		_, err := os.Lstat(filepath.Join(dir, f))
		return err == nil
	})
}

// PartFilesList is the part files as a sentence, for messages.
func PartFilesList() string {
	return strings.Join(partFiles[:len(partFiles)-1], ", ") + " or " + partFiles[len(partFiles)-1]
}

// HoldsPart reports whether the command-line path p holds a part: a file
// (a merged.json), a part directory, a perf root, or an artifact root with
// a part directory among its sub-directories.
func HoldsPart(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	if !fi.IsDir() || IsPartDir(p) || IsPerfRoot(p) {
		return true
	}
	dirs, err := partDirs(p)
	if err != nil {
		return true // unreadable: LoadPartsWith says why
	}
	return slices.ContainsFunc(dirs, func(d partDir) bool { return IsPartDir(d.dir) })
}

// partDir is a directory that LoadPartsWith will read as a part.
type partDir struct {
	dir     string
	missing bool // known not to exist
	empty   bool // exists, but holds neither part files nor part directories
}

// LoadOptions change what LoadPartsWith keeps of the parts.
type LoadOptions struct {
	// SkipLogs leaves the Log of every case that passed ("ok": true) nil,
	// for a report that is only rendered (docs/render.md §3.11); each log
	// is still read and bounded, so that the same cases are left out.
	SkipLogs bool
	// Context, when set, stops the reading once it is done (an interrupt);
	// the parts returned are then incomplete, and the caller checks it.
	Context context.Context
}

// LoadPartsWith reads the parts named by paths, each a part directory or an
// artifact root (docs/formats.md §1.2), in parallel, in byte order of their
// directory names. The error is for paths that exist but cannot be read as
// directories.
func LoadPartsWith(paths []string, opts LoadOptions) ([]Part, error) {
	var dirs []partDir
	for _, p := range paths {
		found, err := partDirs(p)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, found...)
	}
	slices.SortStableFunc(dirs, func(a, b partDir) int {
		return cmp.Or(strings.Compare(filepath.Base(a.dir), filepath.Base(b.dir)), strings.Compare(a.dir, b.dir))
	})
	parts := make([]Part, len(dirs))
	// Parts are read in parallel: scanning summary.json is CPU-bound.
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		wg.Go(func() {
			for i := range next {
				parts[i] = loadPart(dirs[i], opts)
			}
		})
	}
	for i := range dirs {
		if opts.Context != nil && opts.Context.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return parts, nil
}

// partDirs expands one command-line path into part directories.
func partDirs(p string) ([]partDir, error) {
	p = filepath.Clean(p)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return []partDir{{dir: p, missing: true}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("read %s: not a directory (want a part directory or an artifact root)", p)
	}
	// A perf root may hold error.txt and sandbox.json beside perf/ and e2e/
	// (docs/formats.md §1.2, §6): perf/ makes it a root whatever else it holds.
	if IsPartDir(p) && !IsPerfRoot(p) {
		return []partDir{{dir: p}}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("read artifact root %s: %w", p, err)
	}
	var out []partDir
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if strings.HasPrefix(name, ".") || name == PerfDir {
			continue
		}
		sub := filepath.Join(p, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(sub); err == nil {
				isDir = st.IsDir()
			}
		}
		if isDir {
			out = append(out, partDir{dir: sub})
		}
	}
	if len(out) == 0 {
		return []partDir{{dir: p, empty: true}}, nil
	}
	return out, nil
}

// loadPart reads one part directory and decides its status (docs/formats.md §1.3).
func loadPart(d partDir, opts LoadOptions) (p Part) {
	p = Part{Dir: d.dir, Name: partName(d.dir)}
	defer func() { p.Display = DisplayName(p.Name) }() // after part.json may rename
	if d.missing {
		p.Status, p.Reason = StatusMissing, ReasonNotFound
		return p
	}
	if d.empty {
		p.Status, p.Reason = StatusMissing, ReasonNoPartFiles
		return p
	}
	// root refuses symbolic links that leave the part directory.
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		p.Status, p.Reason = StatusMissing, fmt.Sprintf("read %s: %v", d.dir, err)
		return p
	}
	defer root.Close()
	l := partLoad{p: &p, root: root, dir: d.dir, skipLogs: opts.SkipLogs, ctx: opts.Context}
	_, err = root.Lstat("error.txt")
	p.ErrorTxt = err == nil
	metaBroken := l.meta()
	l.setup()
	sum, summaryErr := l.summary()
	if !p.HasSummary {
		l.cases("cases.jsonl", readCasesJSONL, "line skipped")
	}
	l.timelines()
	l.decide(metaBroken, summaryErr, sum)
	p.logsClean = true // every case came through caseReader.decodeKept
	return p
}

// partName is the base name of dir (of its absolute path for "." or "/").
func partName(dir string) string {
	name := filepath.Base(dir)
	if abs, err := filepath.Abs(dir); err == nil && (name == "." || name == string(filepath.Separator)) {
		name = filepath.Base(abs)
	}
	return name
}

// partLoad reads the files of one part directory, through root, into p;
// each step records what it could not read in p.Problems.
type partLoad struct {
	p        *Part
	root     *os.Root
	dir      string
	skipLogs bool
	ctx      context.Context
	// repeated is the first file found to repeat a key in an object: what
	// it says is ambiguous, so the part cannot count as complete.
	repeated string
}

func (l *partLoad) file(n string) string { return filepath.Join(l.dir, n) }

func (l *partLoad) problem(err error, then string) {
	pr := problemOf(err, l.dir, then)
	if errors.Is(err, errRepeatedKey) && l.repeated == "" {
		l.repeated = pr.File
	}
	l.p.Problems = append(l.p.Problems, pr)
}

// inFile notes the problems msgs ("" for none) of the part's file name,
// followed by then.
func (l *partLoad) inFile(name string, msgs []string, then string) {
	for _, msg := range msgs {
		if msg != "" {
			l.problem(&fileError{Path: l.file(name), Err: errors.New(msg)}, then)
		}
	}
}

// meta reads part.json; broken is why it could not be read ("" when it
// was, or is absent).
func (l *partLoad) meta() (broken string) {
	var meta PartMeta
	switch _, err := readJSONIn(l.root, l.dir, "part.json", safefile.Part, &meta); {
	case err == nil:
		l.p.Meta = &meta
		l.p.Name = cmp.Or(meta.Part, l.p.Name)
		l.p.Planned = meta.Planned
	case !errors.Is(err, fs.ErrNotExist):
		broken = err.Error()
		l.problem(err, "the part's plan and completion are unknown")
	}
	return broken
}

// setup reads setup.json, which must be complete to count.
func (l *partLoad) setup() {
	var setup Setup
	data, err := readJSONIn(l.root, l.dir, "setup.json", safefile.Part, &setup)
	if err == nil {
		err = incompleteSetup(data, l.file("setup.json"))
	}
	switch {
	case err == nil:
		l.p.Setup = &setup
	case !errors.Is(err, fs.ErrNotExist):
		l.problem(err, "the part contributes no setup")
	}
}

// summary reads summary.json; failed is why there is none ("no
// summary.json" when absent), sum what was read.
func (l *partLoad) summary() (sum *readResult, failed string) {
	sum, err := l.cases("summary.json", readSummary, "case left out")
	switch {
	case err == nil:
		l.p.HasSummary = true
		l.p.Deselected = sum.Deselected
	case errors.Is(err, fs.ErrNotExist):
		failed = "no summary.json"
	default:
		failed = err.Error()
	}
	return sum, failed
}

// cases reads the cases of the part's file name (summary.json, or
// cases.jsonl for a part without one) with read, noting what it found
// wrong; a case or line it left out is followed by dropped.
func (l *partLoad) cases(name string, read func(io.Reader, bool) (*readResult, error), dropped string) (*readResult, error) {
	f, err := safefile.OpenIn(l.root, l.dir, name)
	res, err := readOpened(l.ctx, f, err, l.file(name), l.skipLogs, read)
	switch {
	case err == nil:
		l.p.Cases = res.Cases
		for _, msg := range res.Problems {
			l.p.Problems = append(l.p.Problems, Problem{What: msg})
		}
		l.inFile(name, res.Dropped, dropped)
		l.inFile(name, res.Repeated, "both kept")
		l.inFile(name, []string{unreadProblem(res.Unread), res.Stopped}, "")
	case !errors.Is(err, fs.ErrNotExist):
		l.problem(err, "")
	}
	return res, err
}

// timelines reads the usage timeline of each failed case, which its chart
// draws (docs/render.md §3.9).
func (l *partLoad) timelines() {
	for i := range l.p.Cases {
		c := &l.p.Cases[i]
		if !c.Failed() {
			continue
		}
		tl, err := readUsage(l.root, l.dir, c.Name)
		if err != nil {
			l.problem(err, "the case has no chart")
			continue
		}
		c.Timeline = tl
	}
}

// decide sets the part's status and reason from what was read.
func (l *partLoad) decide(metaBroken, summaryErr string, sum *readResult) {
	p := l.p
	switch {
	case p.HasSummary && metaBroken != "":
		p.Status, p.Reason = StatusPartial, "part.json could not be read, so the part's completion is unknown"
	case p.HasSummary && p.Meta != nil && p.Meta.Complete != nil && !*p.Meta.Complete:
		p.Status, p.Reason = StatusPartial, "part.json says complete: false"
	case p.HasSummary && l.repeated != "":
		p.Status, p.Reason = StatusPartial, l.repeated+" repeats a key, so what it says is ambiguous (see the problems)"
	case p.HasSummary && sum.NDropped+sum.NRepeated+sum.Unread > 0:
		// A case left out or repeated is a result the report does not have.
		p.Status, p.Reason = StatusPartial, summaryDefects(sum.NDropped+sum.Unread, sum.NRepeated)
	case p.HasSummary:
		p.Status = StatusComplete
	case len(p.Cases) > 0:
		p.Status, p.Reason = StatusPartial, fmt.Sprintf("%s; %d finished cases from cases.jsonl", summaryErr, len(p.Cases))
	default:
		p.Status, p.Cases = StatusMissing, nil
		switch {
		case !IsPartDir(l.dir):
			p.Reason = ReasonNoPartFiles
		case summaryErr == "no summary.json" && p.ErrorTxt:
			p.Reason = "no summary.json; error.txt says why the part could not start"
		default:
			p.Reason = summaryErr
		}
	}
}

// summaryDefects is the Reason of a part whose summary.json was read with
// cases left out or names repeated.
func summaryDefects(dropped, repeated int) string {
	var what []string
	if dropped > 0 {
		what = append(what, text.Plural(dropped, "case", "cases")+" could not be read")
	}
	if repeated > 0 {
		what = append(what, text.Plural(repeated, "case name repeats", "case names repeat"))
	}
	return "summary.json: " + strings.Join(what, ", ") + " (see the problems)"
}

// incompleteSetup says what the setup.json in data (at path) lacks of the
// engines and cases every runner writes: without them (null, {}, cut short)
// the part would show as having tested nothing.
func incompleteSetup(data []byte, path string) error {
	// Setup decodes {} and null alike: the values as written tell them apart.
	var probe struct {
		Engines jsontext.Value `json:"engines"`
		Cases   jsontext.Value `json:"cases"`
	}
	_ = json.Unmarshal(data, &probe, readOptions) // data decoded into a Setup already
	var missing []string
	for i, v := range []jsontext.Value{probe.Engines, probe.Cases} {
		if len(v) == 0 || v.Kind() == 'n' {
			missing = append(missing, [...]string{"engines", "cases"}[i])
		}
	}
	if missing == nil {
		return nil
	}
	return &fileError{Path: path, Err: fmt.Errorf("%s: missing, so the setup is incomplete", strings.Join(missing, " and "))}
}
