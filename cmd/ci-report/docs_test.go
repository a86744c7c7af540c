package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Documents are cited as `docs/<file>.md §N` (docs/design.md §5). These
// patterns find such citations, with the sections that follow them (`§3`,
// `§4.6–4.7`, `§3, §6`, a `// ` line break between), and the names of the
// documents that used to live outside the repository. The old names are
// built from pieces so that this file does not cite them itself.
var (
	docCiteRE    = regexp.MustCompile(`docs/([A-Za-z0-9_-]+\.md)((?:(?:[\s,;(]|//|and|or)*§\d+(?:\.\d+)*(?:\s*[–-]\s*\d+(?:\.\d+)*)?)*)`)
	sectionNumRE = regexp.MustCompile(`\d+(?:\.\d+)*`)
	headingRE    = regexp.MustCompile(`(?m)^#{2,6} (\d+(?:\.\d+)*)\.? `)
	outsideDocRE = regexp.MustCompile(`\b(?:` + `SPEC` + `-[A-Za-z]+(?:\.md)?|` + `DESIGN` + `\.md)`)
)

// citationProblems checks the citations in files (path → text) against the
// documents under docs/ (file name → text): every cited document exists,
// every cited section is a heading of it, and no file names a document that
// lives outside the repository. Problems come back sorted.
func citationProblems(files, docs map[string]string) []string {
	sections := map[string]map[string]bool{}
	for name, text := range docs {
		sections[name] = map[string]bool{}
		for _, m := range headingRE.FindAllStringSubmatch(text, -1) {
			sections[name][m[1]] = true
		}
	}
	var out []string
	for path, text := range files {
		line := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
		for _, loc := range outsideDocRE.FindAllStringIndex(text, -1) {
			out = append(out, path+":"+strconv.Itoa(line(loc[0]))+": cites "+text[loc[0]:loc[1]]+", a document outside the repository; cite docs/<file>.md §N")
		}
		for _, m := range docCiteRE.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			secs, ok := sections[name]
			if !ok {
				out = append(out, path+":"+strconv.Itoa(line(m[0]))+": cites docs/"+name+", which does not exist")
				continue
			}
			for _, n := range sectionNumRE.FindAllString(text[m[4]:m[5]], -1) {
				if !secs[n] {
					out = append(out, path+":"+strconv.Itoa(line(m[0]))+": cites docs/"+name+" §"+n+", which has no such section")
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestCitationProblems(t *testing.T) {
	docs := map[string]string{"formats.md": "# F\n\n## 3. setup.json\n\n### 4.1 log\n\n## 4. summary.json\n"}
	type tc struct {
		name string
		text string
		want []string
	}
	for _, c := range []tc{
		{"section", "// setup.json (docs/formats.md §3).", nil},
		{"subsection and list", "see docs/formats.md §3, §4.1 and §4", nil},
		{"range", "docs/formats.md §4–4.1", nil},
		{"across a comment line", "// the log (docs/formats.md\n// §4.1) of a case", nil},
		{"document only", "[formats](docs/formats.md)", nil},
		{"missing document", "docs/render.md §2", []string{"f.go:1: cites docs/render.md, which does not exist"}},
		{"missing section", "x\ndocs/formats.md §5", []string{"f.go:2: cites docs/formats.md §5, which has no such section"}},
		{"missing range end", "docs/formats.md §3–3.2", []string{"f.go:1: cites docs/formats.md §3.2, which has no such section"}},
		{"old spec", "(" + "SPEC" + "-formats §3)", []string{"f.go:1: cites " + "SPEC" + "-formats, a document outside the repository; cite docs/<file>.md §N"}},
		{"old design", "see " + "DESIGN" + ".md", []string{"f.go:1: cites " + "DESIGN" + ".md, a document outside the repository; cite docs/<file>.md §N"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := citationProblems(map[string]string{"f.go": c.text}, docs)
			if !slices.Equal(got, c.want) {
				t.Errorf("problems\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestDocCitations holds the repository to its citation rule: every .go,
// .md and .tmpl file that cites docs/<file>.md cites a document of docs/ and,
// with §N, one of its sections; none cites the documents that used to live
// outside the repository.
func TestDocCitations(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	docs := map[string]string{}
	entries, err := os.ReadDir(filepath.Join(root, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			data, err := os.ReadFile(filepath.Join(root, "docs", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			docs[e.Name()] = string(data)
		}
	}
	files := map[string]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// node_modules: npm packages installed for a test (git ignores
			// them), whose READMEs cite their own docs.
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".tmpl":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found only %d files under %s: not the repository", len(files), root)
	}
	for _, p := range citationProblems(files, docs) {
		t.Error(p)
	}
}
