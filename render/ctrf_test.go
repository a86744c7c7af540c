package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ovg-project/ci-report/collect"
	"github.com/ovg-project/ci-report/merge"
)

// ctrfSchemaFile is CTRF's published JSON schema, copied from the ctrf npm
// package (testdata/ctrf/README.md).
var ctrfSchemaFile = filepath.Join("testdata", "ctrf", "ctrf-schema-0.0.json")

// schema is the subset of JSON Schema (draft 7) that CTRF's schema uses.
// loadSchema refuses a schema with any other keyword, so that a newer
// schema cannot pass through keywords this validator would ignore.
type schema struct {
	Type                 string             `json:"type"`
	Required             []string           `json:"required"`
	Properties           map[string]*schema `json:"properties"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	Const                any                `json:"const"`
	Pattern              string             `json:"pattern"`
	Format               string             `json:"format"`
	MinLength            *int               `json:"minLength"`
	MinItems             *int               `json:"minItems"`
	Minimum              *float64           `json:"minimum"`
	AnyOf                []*schema          `json:"anyOf"`
	Ref                  string             `json:"$ref"`
	Definitions          map[string]*schema `json:"definitions"`

	additional *schema // additionalProperties as a schema; nil: any
	closed     bool    // additionalProperties: false
}

var schemaKeywords = map[string]bool{
	"type": true, "required": true, "properties": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "pattern": true, "format": true, "minLength": true, "minItems": true,
	"minimum": true, "anyOf": true, "$ref": true, "definitions": true,
	// annotations
	"$schema": true, "title": true, "description": true,
}

// loadSchema parses a schema object, refusing unknown keywords.
func loadSchema(t *testing.T, raw json.RawMessage, at string) *schema {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatalf("schema %s: %v", at, err)
	}
	for k := range keys {
		if !schemaKeywords[k] {
			t.Fatalf("schema %s uses %q, which this validator does not implement", at, k)
		}
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema %s: %v", at, err)
	}
	sub := func(raw json.RawMessage, name string) *schema { return loadSchema(t, raw, at+"/"+name) }
	for name := range s.Properties {
		s.Properties[name] = sub(mustRaw(keys["properties"], name), "properties/"+name)
	}
	for name := range s.Definitions {
		s.Definitions[name] = sub(mustRaw(keys["definitions"], name), "definitions/"+name)
	}
	if s.Items != nil {
		s.Items = sub(keys["items"], "items")
	}
	for i := range s.AnyOf {
		var list []json.RawMessage
		json.Unmarshal(keys["anyOf"], &list)
		s.AnyOf[i] = sub(list[i], fmt.Sprintf("anyOf/%d", i))
	}
	switch ap := strings.TrimSpace(string(s.AdditionalProperties)); {
	case ap == "false":
		s.closed = true
	case ap == "" || ap == "true":
	default:
		s.additional = sub(s.AdditionalProperties, "additionalProperties")
	}
	return &s
}

func mustRaw(obj json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(obj, &m)
	return m[key]
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	uriRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$`)
)

// validate appends to errs every way v (decoded with UseNumber) breaks s.
func (s *schema) validate(root *schema, v any, at string, errs *[]string) {
	fail := func(format string, a ...any) { *errs = append(*errs, at+": "+fmt.Sprintf(format, a...)) }
	if s.Ref != "" {
		name, ok := strings.CutPrefix(s.Ref, "#/definitions/")
		def := root.Definitions[name]
		if !ok || def == nil {
			fail("unresolvable $ref %q", s.Ref)
			return
		}
		def.validate(root, v, at, errs)
	}
	if s.Type != "" && !hasType(v, s.Type) {
		fail("want %s, got %T", s.Type, v)
		return
	}
	if s.Const != nil && fmt.Sprint(s.Const) != fmt.Sprint(v) {
		fail("want %v", s.Const)
	}
	if s.Enum != nil {
		found := false
		for _, e := range s.Enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v)
		}
		if !found {
			fail("%v is not one of %v", v, s.Enum)
		}
	}
	if len(s.AnyOf) > 0 {
		ok := false
		for _, alt := range s.AnyOf {
			var sub []string
			alt.validate(root, v, at, &sub)
			ok = ok || len(sub) == 0
		}
		if !ok {
			fail("matches none of anyOf")
		}
	}
	switch x := v.(type) {
	case string:
		if s.MinLength != nil && len([]rune(x)) < *s.MinLength {
			fail("shorter than %d", *s.MinLength)
		}
		if s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(x) {
			fail("%q does not match %s", x, s.Pattern)
		}
		switch s.Format {
		case "":
		case "uuid":
			if !uuidRE.MatchString(x) {
				fail("%q is not a uuid", x)
			}
		case "date-time":
			if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
				fail("%q is not a date-time", x)
			}
		case "uri":
			if !uriRE.MatchString(x) {
				fail("%q is not a uri", x)
			}
		default:
			fail("unknown format %q", s.Format)
		}
	case json.Number:
		if s.Minimum != nil {
			if f, _ := x.Float64(); f < *s.Minimum {
				fail("%v is below the minimum %v", x, *s.Minimum)
			}
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			fail("fewer than %d items", *s.MinItems)
		}
		if s.Items != nil {
			for i, e := range x {
				s.Items.validate(root, e, fmt.Sprintf("%s[%d]", at, i), errs)
			}
		}
	case map[string]any:
		for _, k := range s.Required {
			if _, ok := x[k]; !ok {
				fail("missing required %q", k)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				p.validate(root, x[k], at+"."+k, errs)
			} else if s.closed {
				fail("property %q is not allowed", k)
			} else if s.additional != nil {
				s.additional.validate(root, x[k], at+"."+k, errs)
			}
		}
	}
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	}
	return false
}

func loadCTRFSchema(t *testing.T) *schema {
	t.Helper()
	raw, err := os.ReadFile(ctrfSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return loadSchema(t, raw, "#")
}

// ctrfErrors validates a CTRF document against the schema.
func ctrfErrors(t *testing.T, s *schema, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("CTRF output is not JSON: %v", err)
	}
	var errs []string
	s.validate(s, v, "$", &errs)
	return errs
}

// TestCTRFSchemaValidator: the validator finds what breaks the schema, so
// that its silence about ci-report's output means something.
func TestCTRFSchemaValidator(t *testing.T) {
	s := loadCTRFSchema(t)
	good := `{"reportFormat":"CTRF","specVersion":"0.0.0","results":{"tool":{"name":"x"},"summary":{"tests":1,"passed":1,"failed":0,"skipped":0,"pending":0,"other":0,"start":1,"stop":2},"tests":[{"name":"a","status":"passed","duration":3,"labels":{"k":[1,"x"]},"retryAttempts":[{"attempt":1,"status":"failed"}]}]}}`
	if errs := ctrfErrors(t, s, []byte(good)); len(errs) > 0 {
		t.Fatalf("a valid document is refused: %q", errs)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"format", `"CTRF"`, `"ctrf"`, "$.reportFormat: want CTRF"},
		{"spec version", `"0.0.0"`, `"0.0"`, `$.specVersion: "0.0" does not match`},
		{"missing tool", `"tool":{"name":"x"},`, ``, `$.results: missing required "tool"`},
		{"status", `"status":"passed"`, `"status":"ok"`, "$.results.tests[0].status: ok is not one of"},
		{"duration type", `"duration":3`, `"duration":3.5`, "$.results.tests[0].duration: want integer"},
		{"extra property", `"duration":3`, `"duration":3,"owner":"x"`, `$.results.tests[0]: property "owner" is not allowed`},
		{"empty name", `"name":"a"`, `"name":""`, "$.results.tests[0].name: shorter than 1"},
		{"summary count", `"pending":0,`, ``, `$.results.summary: missing required "pending"`},
		{"anyOf", `[1,"x"]`, `[{}]`, "$.results.tests[0].labels.k: matches none of anyOf"},
		{"minimum", `"attempt":1`, `"attempt":0`, "$.results.tests[0].retryAttempts[0].attempt: 0 is below the minimum 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatalf("%q not in the document", tc.from)
			}
			errs := ctrfErrors(t, s, []byte(bad))
			if !strings.Contains(strings.Join(errs, "\n"), tc.want) {
				t.Errorf("errors %q, want %q", errs, tc.want)
			}
		})
	}
}

// ctrfSample is the sample report with a skipped case, durations and part
// times, as an imported or runner part may carry them.
func ctrfSample(t *testing.T) *merge.Report {
	rep := withSkipped(sampleReport(t), merge.Case{Name: "priority-x", SkipReason: "kvctl has no priority command"})
	rep.Cases[1].DurationS = 12.3456
	rep.Parts[0].StartedAt, rep.Parts[0].FinishedAt = "2026-11-28T12:00:04Z", "2026-11-28T12:22:04Z"
	rep.Parts[1].StartedAt = "2026-11-28T12:00:01Z"
	rep.Problems = []collect.Problem{{Part: "vLLM", File: "setup.json", Field: "gpus", What: "want array, got string"}}
	return rep
}

// validCTRF renders rep as CTRF, holds it to CTRF's schema and decodes it.
func validCTRF(t *testing.T, rep *merge.Report, opts Options) (ctrfReport, []byte) {
	t.Helper()
	s := loadCTRFSchema(t)
	var b bytes.Buffer
	if err := CTRF(&b, rep, opts); err != nil {
		t.Fatal(err)
	}
	if errs := ctrfErrors(t, s, b.Bytes()); len(errs) > 0 {
		t.Fatalf("CTRF output breaks the schema:\n%s\n%s", strings.Join(errs, "\n"), b.String())
	}
	var doc ctrfReport
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc, b.Bytes()
}

func TestCTRF(t *testing.T) {
	doc, out := validCTRF(t, ctrfSample(t), sampleOptions())
	sum := doc.Results.Summary
	start := time.Date(2026, 11, 28, 12, 0, 1, 0, time.UTC).UnixMilli()
	stop := time.Date(2026, 11, 28, 12, 22, 4, 0, time.UTC).UnixMilli()
	if sum.Tests != 10 || sum.Passed != 4 || sum.Failed != 4 || sum.Skipped != 1 || sum.Other != 1 || sum.Suites != 2 ||
		sum.Start != start || sum.Stop != stop || sum.Duration == nil || *sum.Duration != stop-start {
		t.Errorf("summary %+v", sum)
	}
	byName := map[string]ctrfTest{}
	for _, tc := range doc.Results.Tests {
		byName[tc.Name] = tc
	}
	for name, want := range map[string]ctrfTest{
		"sglang-setup (SGLang)":              {Status: "passed", Suite: []string{"SGLang"}, Steps: []ctrfStep{{"install_kvcached", "passed"}}},
		"sglang-qwen35_4b-kv_c1":             {Status: "failed", Duration: 12346, Message: "all_ok: 3/20 failed", Suite: []string{"SGLang"}, Steps: []ctrfStep{{"all_ok", "failed"}, {"no_errors", "passed"}}},
		"vllm-qwen05b-native":                {Status: "failed", Message: "no failed check recorded", Suite: []string{"vLLM"}},
		"priority-x":                         {Status: "skipped", Message: "kvctl has no priority command", Suite: []string{"vLLM"}},
		"priority-vllm-qwen05b+vllm-qwen05b": {Status: "other", RawStatus: "not run", Message: "planned, but did not run", Suite: []string{"vLLM"}},
	} {
		want.Name = name
		if got := byName[name]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("test %s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	env := doc.Results.Environment
	if env.Commit != "0123456789abcdef0123456789abcdef01234567" || env.BuildURL != sampleOptions().RunURL || env.Healthy || env.ReportName != "Nightly correctness" {
		t.Errorf("environment %+v", env)
	}
	if doc.Results.Extra.Verdict != "FAIL (4 of 7 cases; 1 not run)" || len(doc.Results.Extra.Problems) != 1 {
		t.Errorf("extra %+v", doc.Results.Extra)
	}
	var again bytes.Buffer
	CTRF(&again, ctrfSample(t), sampleOptions())
	if !bytes.Equal(out, again.Bytes()) {
		t.Error("CTRF output differs between two renders of the same report")
	}
}

// CTRFValidator returns a validator of CTRF documents against CTRF's
// schema, for the tests of package render_test (the export_test.go idiom).
// Call it in the render directory: it reads the schema at once.
func CTRFValidator(t *testing.T) func(doc []byte) []string {
	t.Helper()
	s := loadCTRFSchema(t)
	return func(doc []byte) []string { return ctrfErrors(t, s, doc) }
}

// ctrfNodeModules is where the ctrf npm package may be installed for
// TestCTRFReferenceValidator (.ci/run installs it; git ignores it).
var ctrfNodeModules = filepath.Join("testdata", "ctrf", "node_modules")

// TestCTRFReferenceValidator validates the output with the CTRF project's
// own validator (the ctrf npm package's validate, which runs ajv over the
// same schema), when node and the package are installed:
//
//	npm install --prefix render/testdata/ctrf --no-save --no-package-lock --ignore-scripts ctrf@0.3.0
//
// It is skipped otherwise; TestCTRF checks the schema without them.
func TestCTRFReferenceValidator(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(ctrfNodeModules, "ctrf", "package.json")); err != nil {
		t.Skipf("the ctrf npm package is not installed in %s", ctrfNodeModules)
	}
	var b bytes.Buffer
	if err := CTRF(&b, withRerun(ctrfSample(t)), sampleOptions()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "ctrf.json")
	if err := os.WriteFile(doc, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join(ctrfNodeModules, "ctrf"))
	if err != nil {
		t.Fatal(err)
	}
	script := `const {validate} = require(process.argv[1]);
const fs = require("fs");
const r = validate(JSON.parse(fs.readFileSync(process.argv[2], "utf8")));
if (!r.valid) { console.log(JSON.stringify(r.errors)); process.exit(1); }
const bad = validate({reportFormat: "CTRF", specVersion: "0.0.0", results: {}});
if (bad.valid) { console.log("the validator accepts a document without tool, summary and tests"); process.exit(1); }`
	out, err := exec.Command(node, "-e", script, abs, doc).CombinedOutput()
	if err != nil {
		t.Fatalf("the ctrf package refuses the output: %v\n%s", err, out)
	}
}

// withRerun adds to rep an imported test that passed on its rerun (flaky)
// and one that failed its rerun too (docs/formats.md §4.7).
func withRerun(rep *merge.Report) *merge.Report {
	part := rep.Cases[0].Part
	rep.Cases = append(rep.Cases,
		merge.Case{Name: "pkg::TestFlaky", OK: true, Attempts: 2, Part: part,
			Checks: []collect.Check{{Name: "flakyFailure", OK: true, Kind: "flakyFailure", Detail: "timed out"}}},
		merge.Case{Name: "pkg::TestBroken", Attempts: 3, Part: part, Class: collect.ClassProduct, ClassWhy: "the imported test failed",
			Checks: []collect.Check{{Name: "failure", Kind: "failure", Detail: "boom"}, {Name: "rerunFailure", Kind: "rerunFailure", Detail: "boom"}, {Name: "rerunFailure", Kind: "rerunFailure", Detail: "boom"}}})
	return rep
}

// TestCTRFRetries: a rerun test's retries and flakiness, and the flaky
// count in the summary, hold to CTRF's schema.
func TestCTRFRetries(t *testing.T) {
	doc, _ := validCTRF(t, withRerun(ctrfSample(t)), sampleOptions())
	tests := doc.Results.Tests
	flaky, broken := tests[len(tests)-2], tests[len(tests)-1]
	if flaky.Status != "passed" || !flaky.Flaky || flaky.Retries != 1 || broken.Status != "failed" || broken.Flaky || broken.Retries != 2 {
		t.Errorf("flaky %+v; broken %+v", flaky, broken)
	}
	if doc.Results.Summary.Flaky != 1 {
		t.Errorf("summary flaky %d, want 1", doc.Results.Summary.Flaky)
	}
}

// TestCTRFArms: the CTRF of two arms validates against CTRF's schema, names
// each test's arm and revision in its extra and the parts' deselected tests
// in the summary's, and is healthy when the arms behave as expected.
func TestCTRFArms(t *testing.T) {
	rep := armReport(t, false, true)
	n57, n546 := 57, 546
	rep.Parts[0].Deselected, rep.Parts[1].Deselected = &n57, &n546
	opts := sampleOptions()
	opts.Arms, opts.Expect = []string{"parent", "fix"}, map[string]string{"parent": "fail", "fix": "pass"}
	doc, _ := validCTRF(t, rep, opts)
	if e := doc.Results.Summary.Extra; e == nil || e.Deselected != 603 {
		t.Errorf("summary extra %+v, want 603 deselected", e)
	}
	var got []string
	for _, tc := range doc.Results.Tests {
		got = append(got, fmt.Sprintf("%s %s %+v", tc.Name, tc.Status, *tc.Extra))
	}
	want := []string{"t::a failed {Arm:parent Revision:88c8f96}", "t::b passed {Arm:parent Revision:88c8f96}",
		"t::a passed {Arm:fix Revision:a378969}", "t::b passed {Arm:fix Revision:a378969}"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tests %q, want %q", got, want)
	}
	if !doc.Results.Environment.Healthy || doc.Results.Extra.Verdict != "PASS" {
		t.Errorf("environment %+v, extra %+v", doc.Results.Environment, doc.Results.Extra)
	}
}
