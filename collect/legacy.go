package collect

import (
	"cmp"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// setup.json before `kinds` (docs/formats.md §3.4) named the elastic, limit
// and priority kinds in fields of their own. Such files still read: the
// fields become the kinds' blocks with the wording the runner writes now.

// setupFile is setup.json as read: the current fields and the old ones.
type setupFile struct {
	setupFields
	Elastic          []legacyPair    `json:"elastic"`
	ElasticWorkload  []string        `json:"elastic_workload"`
	ElasticChecks    Ordered[string] `json:"elastic_checks"`
	Limit            []legacyLimit   `json:"limit"`
	LimitWorkload    []string        `json:"limit_workload"`
	LimitChecks      Ordered[string] `json:"limit_checks"`
	Priority         []legacyPair    `json:"priority"`
	PriorityWorkload []string        `json:"priority_workload"`
	PriorityChecks   Ordered[string] `json:"priority_checks"`
}

// setupFields is Setup without its methods, so that decoding it does not
// come back to Setup.UnmarshalJSONFrom.
type setupFields Setup

// legacyPair is an old elastic {name, kind, gpu, batch, a, b} or priority
// {name, kind, gpu, batch, layers, ballast_mib, low, high} entry.
type legacyPair struct {
	Name       string    `json:"name"`
	GPU        string    `json:"gpu"`
	Batch      int       `json:"batch"`
	Layers     []string  `json:"layers"`
	BallastMiB *int      `json:"ballast_mib"`
	A          CaseSetup `json:"a"`
	B          CaseSetup `json:"b"`
	Low        CaseSetup `json:"low"`
	High       CaseSetup `json:"high"`
}

// legacyLimit is an old limit entry: its server's setup under the case's
// name.
type legacyLimit struct {
	Kind string `json:"kind"`
	CaseSetup
}

// The wording of the kinds the old format named, which the runner's kind
// table (runner/kind.go) takes from here.
const (
	ElasticTitle  = "Elastic tests"
	ElasticAbout  = "Two servers share one GPU under a batch limit; the first grows its cache, then gives memory back when the second needs it."
	LimitTitle    = "Limit tests"
	LimitAbout    = "One server runs under a kvcached memory limit, which its cache must respect while it fills and release afterwards."
	PriorityTitle = "Priority tests"
	PriorityAbout = "A low-priority and a high-priority server share one GPU; the low-priority server gives up its idle cache to the high-priority server's burst."
)

// The roles of the servers of the kinds the old format named.
var (
	ElasticRoles  = []string{"server A", "server B"}
	LimitRoles    = []string{"server"}
	PriorityRoles = []string{"low priority", "high priority"}
)

// UnmarshalJSONFrom reads setup.json in either format.
func (s *Setup) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var f setupFile
	if err := json.UnmarshalDecode(dec, &f); err != nil {
		return err
	}
	*s = Setup(f.setupFields)
	f.addLegacy(s)
	return nil
}

// UnmarshalJSON is UnmarshalJSONFrom for encoding/json.
func (s *Setup) UnmarshalJSON(data []byte) error { return decodeJSON(data, s) }

// addLegacy adds the old fields' kinds that hold anything to s, in the
// order the old format showed them: elastic, limit, priority.
func (f *setupFile) addLegacy(s *Setup) {
	elastic := KindSetup{Kind: "elastic", Title: ElasticTitle, About: ElasticAbout, Workload: f.ElasticWorkload, Checks: f.ElasticChecks}
	for _, p := range f.Elastic {
		elastic.Entries = append(elastic.Entries, KindEntry{Name: p.Name, GPU: p.GPU, Batch: p.Batch, Layers: p.Layers,
			BallastMiB: p.BallastMiB, Servers: []RoleServer{{ElasticRoles[0], p.A}, {ElasticRoles[1], p.B}}})
	}
	limit := KindSetup{Kind: "limit", Title: LimitTitle, About: LimitAbout, Workload: f.LimitWorkload, Checks: f.LimitChecks}
	for _, l := range f.Limit {
		limit.Entries = append(limit.Entries, KindEntry{Name: l.Name, Servers: []RoleServer{{LimitRoles[0], l.CaseSetup}}})
	}
	priority := KindSetup{Kind: "priority", Title: PriorityTitle, About: PriorityAbout, Workload: f.PriorityWorkload, Checks: f.PriorityChecks}
	for _, p := range f.Priority {
		// The old readers took a server without a priority as 0 and 1.
		low, high := p.Low, p.High
		low.Priority, high.Priority = cmp.Or(low.Priority, new(0)), cmp.Or(high.Priority, new(1))
		priority.Entries = append(priority.Entries, KindEntry{Name: p.Name, GPU: p.GPU, Batch: p.Batch, Layers: p.Layers,
			BallastMiB: p.BallastMiB, Servers: []RoleServer{{PriorityRoles[0], low}, {PriorityRoles[1], high}}})
	}
	for _, k := range []KindSetup{elastic, limit, priority} {
		if len(k.Entries) > 0 || len(k.Workload) > 0 || k.Checks.Len() > 0 {
			s.AddKind(k)
		}
	}
}
