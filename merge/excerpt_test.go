package merge

import (
	"context"
	"strings"
	"testing"
)

// TestDecodeMergedValidatesExcerptsAndJobs: a merged.json's excerpt
// (docs/formats.md §4.9) and its parts' job ids (§7.1) are validated on
// reading back, with errors naming the field.
func TestDecodeMergedValidatesExcerptsAndJobs(t *testing.T) {
	doc := func(excerpt, ids string) []byte {
		return []byte(`{"format":1,"setup":null,"setup_complete":false,"cases":[{"name":"c","ok":false,"class":"product","checks":[]` + excerpt +
			`,"part":"all"}],"parts":[{"name":"all","display":"all","status":"complete","reason":"","error_txt":false,"planned":1,"ran":1` + ids + `}],"verdict":"FAIL (1 of 1 cases: 1 product)"}`)
	}
	for _, tt := range []struct {
		name, excerpt, ids, want string
	}{
		{"good", `,"excerpt":{"file":"c/serve.log","offset":3,"from":"burst","lines":["x"]}`, `,"run_id":5,"check_run_id":6`, ""},
		{"no excerpt, no ids", "", "", ""},
		{"excerpt leaves the part", `,"excerpt":{"file":"../c/serve.log","offset":3,"from":"burst","lines":["x"]}`, "", `cases[0].excerpt.file: "../c/serve.log" is not a relative`},
		{"excerpt with a line break", `,"excerpt":{"file":"c/serve.log","offset":3,"from":"burst","lines":["x\n"]}`, "", "cases[0].excerpt.lines[0]: not one line"},
		{"run id alone", "", `,"run_id":5`, "parts[0]: run_id 5 and check_run_id 0: want a positive check_run_id"},
		{"check run id alone", `,"excerpt":{"file":"c/serve.log","offset":3,"from":"burst","lines":["x"]}`, `,"check_run_id":6`, ""},
		{"negative check run id", "", `,"run_id":5,"check_run_id":-6`, "parts[0]: run_id 5 and check_run_id -6"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := DecodeMerged(context.Background(), "m.json", doc(tt.excerpt, tt.ids))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("DecodeMerged: %v", err)
				}
				if tt.excerpt != "" && (rep.Cases[0].Excerpt == nil || rep.Parts[0].CheckRunID != 6) {
					t.Fatalf("excerpt or ids lost: %+v %+v", rep.Cases[0].Excerpt, rep.Parts[0])
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "read m.json: "+tt.want) {
				t.Fatalf("err %v, want one with %q", err, tt.want)
			}
		})
	}
}
