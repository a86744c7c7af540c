package collect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/ovg-project/ci-report/internal/safefile"
	"github.com/ovg-project/ci-report/internal/text"
)

// usageFile bounds a `<case>-usage.json`: real ones are tens of KiB.
var usageFile = safefile.Kind{Name: "usage timeline", Max: 8 << 20}

// UsageSample is one element of a co-location case's usage timeline,
// `<case>-usage.json` (docs/formats.md §4.4, which names each field).
type UsageSample struct {
	T            float64
	Phase        string
	GPU, GPUFree *float64 // nil: not read
	KV           Ordered[float64]
	Ledger       Ordered[Ordered[float64]]
}

// MarshalJSON writes the sample as the file holds it, so that a timeline
// kept in merged.json reads back the same.
func (u UsageSample) MarshalJSON() ([]byte, error) {
	var o Ordered[any]
	o.Set("t", u.T)
	if u.Phase != "" {
		o.Set("phase", u.Phase)
	}
	if u.GPU != nil {
		o.Set("gpu", *u.GPU)
	}
	if u.GPUFree != nil {
		o.Set("gpu_free", *u.GPUFree)
	}
	for _, k := range u.KV.Keys() {
		v, _ := u.KV.Get(k)
		o.Set(k, v)
	}
	for _, k := range u.Ledger.Keys() {
		v, _ := u.Ledger.Get(k)
		o.Set(k, v)
	}
	return json.Marshal(o)
}

// UnmarshalJSON reads one element (docs/formats.md §4.4); anything unexpected
// is an error naming the key.
func (u *UsageSample) UnmarshalJSON(data []byte) error {
	var raw Ordered[json.RawMessage]
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*u = UsageSample{}
	for _, k := range raw.Keys() {
		b, _ := raw.Get(k)
		if err := u.setField(k, bytes.TrimSpace(b)); err != nil {
			return err
		}
	}
	if _, ok := raw.Get("t"); !ok {
		return errors.New("t: missing")
	}
	return nil
}

// setField sets the field of key k to its value b, or says why it cannot.
func (u *UsageSample) setField(k string, b json.RawMessage) error {
	switch {
	case k == "phase":
		if err := json.Unmarshal(b, &u.Phase); err != nil || string(b) == "null" {
			return fmt.Errorf("phase: want a string, got %s", text.Cut(string(b), 41))
		}
		return nil
	case k != "t" && k != "gpu" && k != "gpu_free" && len(b) > 0 && b[0] == '{':
		var per Ordered[float64]
		if err := json.Unmarshal(b, &per); err != nil {
			return fmt.Errorf("%s: want an object of numbers by server: %v", k, err)
		}
		u.Ledger.Set(k, per)
		return nil
	}
	f, err := usageNumber(k, b)
	if err != nil {
		return err
	}
	switch k {
	case "t":
		u.T = f
	case "gpu":
		u.GPU = &f
	case "gpu_free":
		u.GPUFree = &f
	default:
		u.KV.Set(k, f)
	}
	return nil
}

// usageNumber is the finite number b, the value of key k.
func usageNumber(k string, b json.RawMessage) (float64, error) {
	var f float64
	// null would decode as 0: a value not read is left out, never null.
	if err := json.Unmarshal(b, &f); err != nil || string(b) == "null" || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s: want a number, got %s", k, text.Cut(string(b), 41))
	}
	return f, nil
}

// ParseUsage reads a usage timeline: a JSON array of UsageSample. An error
// names the element (`[3].gpu: want a number, got "x"`).
func ParseUsage(data []byte) ([]UsageSample, error) {
	var elems []json.RawMessage
	if err := decodeJSON(data, &elems); err != nil {
		return nil, fmt.Errorf("want an array of samples: %w", err)
	}
	out := make([]UsageSample, len(elems))
	for i, e := range elems {
		if err := json.Unmarshal(e, &out[i]); err != nil {
			return nil, fmt.Errorf("[%d].%w", i, err)
		}
	}
	return out, nil
}

// readUsage reads `<case>-usage.json` in the part's root, if there is one
// (nil, nil when absent).
func readUsage(root *os.Root, dir, caseName string) ([]UsageSample, error) {
	name := caseName + "-usage.json"
	if strings.ContainsAny(caseName, `/\`) || caseName == "" || caseName == "." || caseName == ".." {
		return nil, nil // not a file name of this part: no timeline
	}
	var raw json.RawMessage
	_, err := readJSONIn(root, dir, name, usageFile, &raw)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	samples, err := ParseUsage(raw)
	if err != nil {
		return nil, &fileError{Path: dir + string(os.PathSeparator) + name, Err: err}
	}
	return samples, nil
}
