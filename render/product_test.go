package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
	"github.com/ovg-project/ci-report/render"
)

// TestOtherProductSaysNoKvcached: with `product: "acme-kv"` and its own
// repository (docs/render.md §9), no document or export of any golden
// rendering says "kvcached" where the run's data does not. Each golden
// tree's merged.json is rewritten as another project's run would be: every
// "kvcached" in its data (case and check names, env, details, versions,
// known-issue links) becomes "acmekv", while the format's own field names
// and the perf arm's name (docs/formats.md §6) stay as the format has them.
// Whatever "kvcached" the outputs still hold is then written by ci-report
// itself: the run line, the templates' sentences, the table headers, the
// layout labels, the engines' versions, the perf arms. (TestGolden shows the
// default product renders the goldens unchanged.)
func TestOtherProductSaysNoKvcached(t *testing.T) {
	atRoot(t)
	keep := formatKeys(reflect.TypeOf(merge.Report{}), map[reflect.Type]bool{}, map[string]bool{})
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			var merged bytes.Buffer
			if err := gc.load(t).WriteJSON(&merged, nil); err != nil {
				t.Fatalf("write merged.json: %v", err)
			}
			path := filepath.Join(t.TempDir(), "merged.json")
			if err := os.WriteFile(path, rewriteJSON(t, merged.Bytes(), keep), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := loadReport([]string{path}, gc.merge)
			if err != nil {
				t.Fatalf("load the rewritten merged.json: %v", err)
			}
			opts := gc.options()
			opts.Config = render.Config{Product: "acme-kv", RepositoryURL: "https://github.com/acme/acme-kv"}
			opts.RunURL = strings.ReplaceAll(opts.RunURL, "ovg-project/kvcached", "acme/acme-kv")
			opts.ArtifactURL = strings.ReplaceAll(opts.ArtifactURL, "ovg-project/kvcached", "acme/acme-kv")
			if len(opts.KnownIssues) > 0 {
				data, err := json.Marshal(opts.KnownIssues)
				if err != nil {
					t.Fatal(err)
				}
				opts.KnownIssues = nil
				if err := json.Unmarshal(rewriteJSON(t, data, keep), &opts.KnownIssues); err != nil {
					t.Fatal(err)
				}
			}
			outputs := map[string]string{}
			docs, err := render.Render(rep, opts)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			outputs["comment"], outputs["section"] = docs.Comment, docs.Section
			outputs["warnings"] = strings.Join(docs.Warnings, "\n")
			page, err := render.HTML(docs, render.DefaultConfig().Title(docs.SectionName))
			if err != nil {
				t.Fatalf("render.HTML: %v", err)
			}
			outputs["preview.html"] = string(page)
			for name, export := range map[string]func(*bytes.Buffer) error{
				"text":  func(b *bytes.Buffer) error { return render.Text(b, rep, opts) },
				"junit": func(b *bytes.Buffer) error { return render.JUnit(b, rep, opts) },
				"ctrf":  func(b *bytes.Buffer) error { return render.CTRF(b, rep, opts) },
			} {
				var b bytes.Buffer
				if err := export(&b); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				outputs[name] = b.String()
			}
			if docs.Verdict != "DID NOT RUN" && !strings.Contains(docs.Comment, "acme-kv") {
				t.Errorf("the comment does not name the product at all:\n%s", docs.Comment)
			}
			// The JUnit property ci-report.kvcached_sha keeps its name for
			// the tools that read it (docs/render.md §8): a format's name.
			outputs["junit"] = strings.ReplaceAll(outputs["junit"], `name="ci-report.kvcached_sha"`, "")
			// The runner's per-server variable, which the engine bullets
			// name as code (docs/render.md §4.4): the runner sets it for
			// every server with a KV layout, whatever the product.
			for _, name := range []string{"section", "comment", "preview.html"} {
				outputs[name] = strings.NewReplacer("a per-server `KVCACHED_IPC_NAME`", "", "a per-server <code>KVCACHED_IPC_NAME</code>", "").Replace(outputs[name])
			}
			// The text view carries the section as plain text, wrapped.
			outputs["text"] = textIPCName.ReplaceAllString(outputs["text"], "")
			for name, out := range outputs {
				for _, m := range kvcachedWord.FindAllStringIndex(out, -1) {
					t.Errorf("%s says %q: …%s…", name, out[m[0]:m[1]], out[max(0, m[0]-80):min(len(out), m[1]+80)])
				}
			}
		})
	}
}

var kvcachedWord = regexp.MustCompile(`(?i)kvcached`)

var textIPCName = regexp.MustCompile(`a per-server\s+KVCACHED_IPC_NAME`)

// formatKeys collects the JSON field names of t and every type it holds: the
// keys of the format, which a rewrite of the data must leave as they are.
func formatKeys(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) map[string]bool {
	if seen[t] {
		return out
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		formatKeys(t.Elem(), seen, out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				out[name] = true
			}
			formatKeys(f.Type, seen, out)
		}
	}
	return out
}

// rewriteJSON replaces "kvcached" by "acmekv" (KVCACHED by ACMEKV) in every
// string and every object key of data but the format's keys, and keeps the
// perf arm's name (the `arm` and `arms` values collect.PerfArmProduct).
func rewriteJSON(t *testing.T, data []byte, keep map[string]bool) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(rewriteValue(v, "", keep))
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return out
}

func rewriteValue(v any, key string, keep map[string]bool) any {
	switch x := v.(type) {
	case string:
		if (key == "arm" || key == "arms") && x == collect.PerfArmProduct {
			return x
		}
		return strings.NewReplacer("kvcached", "acmekv", "KVCACHED", "ACMEKV", "Kvcached", "Acmekv").Replace(x)
	case []any:
		for i := range x {
			x[i] = rewriteValue(x[i], key, keep)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk := k
			if !keep[k] {
				nk = rewriteValue(k, "", keep).(string)
			}
			out[nk] = rewriteValue(e, k, keep)
		}
		return out
	}
	return v
}
