package junit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

// TestPartFilesAsWriteJSON: summary.json and part.json of imports of every
// fixture (with a metrics file, a deselected count, problems and suites)
// are the bytes collect.PartWriter.WriteJSON writes for what they hold.
func TestPartFilesAsWriteJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	metrics := filepath.Join("testdata", "metrics-parent.jsonl")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			im := &Import{Files: []string{file, file}}
			if strings.Contains(file, "xunit2-parent") {
				im.Files, im.Metrics = im.Files[:1], metrics
			}
			_, dir := importFiles(t, im)
			for _, c := range []struct {
				name string
				v    any
			}{{"summary.json", &collect.Summary{}}, {"part.json", &collect.PartMeta{}}} {
				got, err := os.ReadFile(filepath.Join(dir, c.name))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(got, c.v); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				want, err := json.MarshalIndent(c.v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if want = append(want, '\n'); !bytes.Equal(got, want) {
					t.Errorf("%s is not as WriteJSON writes it:\n got %s\nwant %s", c.name, got, want)
				}
			}
		})
	}
}

// TestRedactedPartFilesAsWriteJSON: a redacted import's summary.json and
// part.json are the bytes WriteJSON writes, redacting, for what the same
// import holds unredacted, where a secret shares strings with HTML
// characters (which WriteJSON escapes before it redacts, and leaves as they
// are in a string that redaction requoted).
func TestRedactedPartFilesAsWriteJSON(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	file := filepath.Join(t.TempDir(), "junit.xml")
	xml := `<testsuite name="s &lt;` + secret + `&gt;" hostname="h` + secret + `" tests="2" failures="1">
<properties><property name="p" value="v&lt;` + secret + `"/></properties>
<testcase classname="c" name="t1 &lt;x&gt; ` + secret + `" time="1.5"><failure message="boom &lt;&amp; ` + secret + `">trace &lt;b&gt;</failure></testcase>
<testcase classname="c" name="t2&amp;" time="0.1"/></testsuite>`
	if err := os.WriteFile(file, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plain := importFiles(t, &Import{Files: []string{file}})
	red := collect.NewRedactor(func(string) string { return secret }, "GITHUB_TOKEN")
	_, redacted := importFiles(t, &Import{Files: []string{file}, Redact: red})
	for _, c := range []struct {
		name string
		v    any
	}{{"summary.json", &collect.Summary{}}, {"part.json", &collect.PartMeta{}}} {
		data, err := os.ReadFile(filepath.Join(plain, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, c.v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := &collect.PartWriter{Dir: t.TempDir(), Redact: red}
		if err := w.WriteJSON(c.name, c.v); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(w.Dir, c.name))
		got, err := os.ReadFile(filepath.Join(redacted, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || bytes.Contains(got, []byte(secret)) || !bytes.Contains(got, []byte("<x>")) {
			t.Errorf("%s is not as WriteJSON writes it, redacting:\n got %s\nwant %s", c.name, got, want)
		}
	}
}
