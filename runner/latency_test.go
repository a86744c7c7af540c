package runner

import (
	"encoding/json"
	"testing"

	"github.com/ovg-project/ci-report/collect"
)

func TestLatencySummary(t *testing.T) {
	res := func(l ...float64) []collect.RequestResult {
		out := make([]collect.RequestResult, len(l))
		for i, v := range l {
			out[i].LatencyS = v
		}
		return out
	}
	type tc struct {
		in   []collect.RequestResult
		want string
	}
	for _, c := range []tc{
		{res(3, 1, 2), `{"p50":2,"max":3}`},
		{res(4, 1, 2, 3.00049), `{"p50":2.5,"max":4}`},
		{res(0.0004), `{"p50":0,"max":0}`},
		{nil, `null`},
	} {
		b, _ := json.Marshal(latencySummary(requestLatencies(c.in)))
		if string(b) != c.want {
			t.Errorf("latencySummary = %s, want %s", b, c.want)
		}
	}
}
