package junit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: no input makes Parse or the conversion to cases panic, hang or
// hold more than the limits; an error always names the file and a line;
// every case it accepts has a name, valid UTF-8 texts within the cuts and
// a log that is JSON. Seeds: the fixtures and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseAll(bytes.NewReader(data), "fuzz.xml", 1<<20)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "read fuzz.xml: line ") && !strings.HasPrefix(msg, "read fuzz.xml: file too large") {
				t.Fatalf("error %q does not name the file and a line", msg)
			}
			return
		}
		for i := range d.Suites {
			s := &d.Suites[i]
			for j := range s.Cases {
				c := &s.Cases[j]
				if len(c.SystemOut) > maxText || len(c.SystemErr) > maxText {
					t.Fatalf("case %q holds %d and %d bytes of output", c.Name, len(c.SystemOut), len(c.SystemErr))
				}
				cr, log := caseResult("fuzz.xml", &s.Suite, c)
				if strings.TrimSpace(cr.Name) == "" || !utf8.ValidString(cr.SkipReason) {
					t.Fatalf("case %+v", cr)
				}
				for _, ch := range cr.Checks {
					if !utf8.ValidString(ch.Detail) || utf8.RuneCountInString(ch.Detail) > detailCut || strings.ContainsAny(ch.Detail, "\r\n") {
						t.Fatalf("detail %q", ch.Detail)
					}
				}
				raw, err := json.Marshal(log)
				if err != nil || !json.Valid(raw) {
					t.Fatalf("log of %q: %v", cr.Name, err)
				}
			}
		}
	})
}

// pytestNodeIDSplit is pytestNodeID as it was written first, splitting
// the classname and joining its components: FuzzPytestNodeID holds the
// one-string version to it.
func pytestNodeIDSplit(classname, name, file string) string {
	if classname == "" {
		return name
	}
	if file != "" {
		file = filepath.ToSlash(file)
		mod := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
		if classname == mod {
			return file + "::" + name
		}
		if rest, ok := strings.CutPrefix(classname, mod+"."); ok {
			return strings.Join(append(append([]string{file}, strings.Split(rest, ".")...), name), "::")
		}
	}
	parts := strings.Split(classname, ".")
	k := len(parts)
	for i := len(parts) - 2; i >= 0; i-- {
		if testModule(parts[i]) {
			k = i + 1
			break
		}
	}
	for i := 1; i < len(parts) && k == len(parts); i++ {
		if strings.HasPrefix(parts[i], "Test") {
			k = i
			break
		}
	}
	path := strings.Join(parts[:k], "/") + ".py"
	return strings.Join(append(append([]string{path}, parts[k:]...), name), "::")
}

// FuzzPytestNodeID: the node id built as one string is the one splitting
// and joining gives, for any classname, name and file.
func FuzzPytestNodeID(f *testing.F) {
	for _, c := range [][3]string{
		{"tests.test_x.TestA", "test_b[p]", ""}, {"tests.test_x", "test_b", ""}, {"tests.test_x.TestA.TestB", "t", ""},
		{"tests.test_x.TestA", "t", "tests/test_x.py"}, {"tests.test_x", "t", "tests/test_x.py"}, {"a.b", "t", "c.py"},
		{"", "t", ""}, {".Test", "t", ""}, {"a.", "t", ""}, {"a..Test.", "t", ""}, {"Test", "t", ""}, {"a.Test.b", "t", "a.py"},
		{"tests.test_x.AllocatorCase", "t", ""}, {"test_a.b_test.C.D", "t", ""}, {"x_test.", "t", ""}, {".test_.", "t", ""},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, classname, name, file string) {
		if got, want := pytestNodeID(classname, name, file), pytestNodeIDSplit(classname, name, file); got != want {
			t.Fatalf("pytestNodeID(%q, %q, %q) = %q, want %q", classname, name, file, got, want)
		}
	})
}
