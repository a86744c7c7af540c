package collect

import (
	encjson "encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOldSetupReadsAsKinds: a setup.json of the format before `kinds`
// (docs/formats.md §3.4; internal/treegen writes acceptance's vllm part and
// nightly-pass's legacy part in it, and render's TestGolden renders
// acceptance, which merges it with a part of the current format) reads its
// elastic, limit and priority fields as the kinds' blocks: every entry
// under its name, its servers under their roles in the old order, its GPU,
// batch, layers and ballast, and the kind's workload and checks as the old
// fields had them. Written again, it is a file of the current format that
// reads back to the same setup.
func TestOldSetupReadsAsKinds(t *testing.T) {
	path := filepath.Join("..", "testdata", "trees", "acceptance", "vllm", "setup.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]encjson.RawMessage
	if err := encjson.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	var s Setup
	if err := DecodeFile(path, data, &s); err != nil {
		t.Fatal(err)
	}
	// An old entry of any kind: a pair's fields (legacyPair) and a limit
	// entry's case setup (legacyLimit, its name the case's).
	type oldEntry struct {
		legacyPair
		legacyLimit
	}
	for _, tc := range []struct {
		kind, title string
		servers     func(e *oldEntry) []RoleServer
	}{
		{"elastic", "Elastic tests", func(e *oldEntry) []RoleServer {
			return []RoleServer{{"server A", e.A}, {"server B", e.B}}
		}},
		{"limit", "Limit tests", func(e *oldEntry) []RoleServer {
			return []RoleServer{{"server", e.legacyLimit.CaseSetup}}
		}},
		{"priority", "Priority tests", func(e *oldEntry) []RoleServer {
			return []RoleServer{{"low priority", e.Low}, {"high priority", e.High}}
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			var entries []oldEntry
			var workload []string
			var checks Ordered[string]
			for _, f := range []struct {
				key string
				v   any
			}{{tc.kind, &entries}, {tc.kind + "_workload", &workload}, {tc.kind + "_checks", &checks}} {
				if err := DecodeFile(path, old[f.key], f.v); err != nil {
					t.Fatalf("%s: %v", f.key, err)
				}
			}
			if len(entries) == 0 || len(workload) == 0 || checks.Len() == 0 {
				t.Fatalf("the old file has no %s entries, workload or checks: the test reads nothing", tc.kind)
			}
			k := s.Kind(tc.kind)
			if k == nil {
				t.Fatalf("no %s block; kinds %+v", tc.kind, s.Kinds)
			}
			if k.Title != tc.title || k.About == "" || !cmp.Equal(k.Workload, workload) || !cmp.Equal(k.Checks.Keys(), checks.Keys()) {
				t.Errorf("%s block's texts: title %q, about %q, workload %q, checks %q", tc.kind, k.Title, k.About, k.Workload, k.Checks.Keys())
			}
			if len(k.Entries) != len(entries) {
				t.Fatalf("%d %s entries, the old file has %d", len(k.Entries), tc.kind, len(entries))
			}
			for i := range entries {
				e := &entries[i]
				// An old limit entry is its server's setup under the
				// case's name.
				e.legacyLimit.Name = e.legacyPair.Name
				servers := tc.servers(e)
				if tc.kind == "priority" && e.Low.Priority == nil && e.High.Priority == nil {
					lo, hi := 0, 1
					servers[0].Priority, servers[1].Priority = &lo, &hi
				}
				want := KindEntry{Name: e.Name, GPU: e.GPU, Batch: e.Batch, Layers: e.Layers, BallastMiB: e.BallastMiB, Servers: servers}
				if diff := cmp.Diff(want, k.Entries[i], cmp.AllowUnexported(Ordered[string]{})); diff != "" {
					t.Errorf("%s entry %d (-old file +read): %s", tc.kind, i, diff)
				}
			}
		})
	}
	written, err := encjson.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]encjson.RawMessage
	if err := encjson.Unmarshal(written, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"elastic", "elastic_checks", "limit", "limit_workload", "priority", "priority_checks"} {
		if _, ok := keys[k]; ok {
			t.Errorf("written again, the setup has the old field %s", k)
		}
	}
	var again Setup
	if err := DecodeFile("setup.json", written, &again); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, again, cmp.AllowUnexported(Ordered[string]{}, Ordered[Engine]{}, Ordered[*string]{})); diff != "" {
		t.Errorf("the current format does not read back to the same setup (-first +again): %s", diff)
	}
}
