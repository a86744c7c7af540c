package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
	"github.com/ovg-project/ci-report/runner/internal/checks"
)

// runSetupCase is `<engine>-setup` (docs/runner.md §5.1): install or find
// the engine, probe its versions and inputs, and pick its expectation set
// (§2.6), so that no case runs against guessed expectations.
func runSetupCase(ctx context.Context, c *Case) collect.CaseResult {
	name := c.Entry.Engine
	var list []collect.Check
	if c.R.gpuErr != nil {
		list = append(list, collect.Check{Name: "gpu_available", Detail: text.CutLine(c.R.gpuErr.Error(), 300)})
	}
	c.Progress("installing kvcached")
	problem, note := c.install(ctx, name)
	list = append(list, checks.InstallKvcached(problem, note))
	inst := len(list) - 1
	var log collect.Ordered[any]
	if problem == "" {
		sets := c.Engine(name).Expectations
		c.Progress("probing versions")
		v, err := c.probeVersions(ctx, name)
		if err != nil {
			msg := text.CutLine(c.R.Redactor().String(err.Error()), 500)
			log.Set("version_probe_error", msg)
			if len(sets) > 0 {
				list = append(list, checks.ExpectationsMatched("", "the version probe failed, so no expectation set can be picked: "+msg))
			}
		} else {
			log.Set("versions", v)
			if len(v.KvcachedInstallProblems) > 0 {
				list[inst] = checks.InstallKvcached(installChecksFailed+strings.Join(v.KvcachedInstallProblems, "; "), "")
			}
			c.R.verMu.Lock()
			c.R.versions[name] = v
			if why := integrationDisabled(name, v); len(sets) > 0 && why != "" {
				list = append(list, checks.ExpectationsMatched("", why))
			} else if len(sets) > 0 {
				p := pickExpectations(name, sets, v)
				if len(v.KvcachedUnresolvedRanges) > 0 {
					p.why += "; the probe could not resolve kvcached's ranges for " + strings.Join(v.KvcachedUnresolvedRanges, ", ")
				}
				set := ""
				if p.set != nil {
					set = p.set.Name
					c.R.expect[name] = p
				}
				x := map[string]any{"set": set, "why": p.why}
				if p.provisional {
					x["provisional"] = true
				}
				log.Set("expectations", x)
				list = append(list, checks.ExpectationsMatched(set, p.why))
			}
			c.R.verMu.Unlock()
		}
		c.probeCapabilities(ctx, name, c.needs, &log)
		c.probeInputs(ctx, name, &log)
	}
	return c.Result(list, log, nil)
}

// installChecksFailed begins install_kvcached's detail when kvcached's own
// post-install checks (the probe's kvcached_install_problems) failed: the
// product's failure (classifyCase), as a failed install command is.
const installChecksFailed = "kvcached's post-install checks failed: "

func (c *Case) install(ctx context.Context, engineName string) (problem, note string) {
	if cmdline, ok := c.R.InstallCmd[engineName]; ok && cmdline != "" {
		logName := engineName + "-install.log"
		logPath := filepath.Join(c.R.OutDir, logName)
		f, err := safefile.Create(logPath)
		if err != nil {
			if we, ok := errors.AsType[*safefile.WriteError](err); ok {
				err = we.Err // its text names the path as "write <path>"
			}
			return fmt.Sprintf("create %s: %v", logPath, err), ""
		}
		defer f.Close()
		argv := append(slices.Clone(c.R.PrefixFor(engineName)), "sh", "-c", cmdline)
		ictx, cancel := context.WithTimeout(ctx, c.R.Timing.InstallTimeout)
		defer cancel()
		cmd := exec.CommandContext(ictx, argv[0], argv[1:]...)
		rw := c.R.Redactor().Writer(f)
		tail := &tailBuffer{max: 300}
		cmd.Stdout = io.MultiWriter(rw, tail)
		cmd.Stderr = cmd.Stdout
		prepareGroup(cmd)
		err = cmd.Run()
		rw.Close()
		if err != nil {
			lines := strings.Split(strings.TrimSpace(tail.String()), "\n")
			last := lines[len(lines)-1]
			return c.R.Redactor().String(fmt.Sprintf("install command failed (%v); see %s: %s", err, logName, last)), ""
		}
		return "", "installed; output in " + logName
	}
	return c.R.host().FindServer(ctx, c, engineName)
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return text.Valid(string(t.b)) }

// integrationDisabled says why kvcached disables its whole integration with
// the probed engine ("" when it does not, or that is unknown): the engine's
// version lies outside the range kvcached's autopatch.py guards with
// `is_integration_version_supported` (Versions.KvcachedIntegrationRanges),
// so every kvcached case would fail as if kvcached were at fault.
func integrationDisabled(engineName string, v Versions) string {
	rng, ok := v.KvcachedIntegrationRanges[engineName]
	if !ok || !outside(rng, v.Engine) {
		return ""
	}
	return fmt.Sprintf("kvcached disabled itself: %s %s is outside %s (the range its autopatch.py guards the %s integration with; it logs `%s integration disabled: unsupported version %s; running without kvcached` and patches nothing)",
		engineName, v.Engine, rng, engineName, engineName, v.Engine)
}
