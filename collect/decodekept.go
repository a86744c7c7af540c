package collect

import (
	"strconv"
	"unicode/utf8"
)

// decodeKeptDirect decodes kept, the compact object (valid JSON) of a case's kept values
// as caseReader.record wrote it, into c (zero) without reflection, when it
// has the common shape: each key at most once, written exactly as the
// struct tags of CaseResult and Check say, strings without escapes and valid
// UTF-8, numbers where numbers go, no excerpt, a log that is an object.
// Anything else returns false, leaving c to json.Unmarshal, which decodes
// it the same (FuzzDecodeKeptDirect) and names what is wrong with it. A
// case of a real summary.json (json.dumps of the runner's dicts) takes this
// path: its 20-odd checks cost a pass over their bytes, not a reflective
// decoder's.
//
// s, kept across the cases of a file (nil: nothing kept), interns check
// names (the same score of names in every case) and whole checks arrays
// (every passing case of a kind writes the same one), so that thousands of
// cases hold each once, and collects a case's checks before they are
// copied out at their number.
func decodeKeptDirect(kept []byte, c *CaseResult, s *keptScratch) bool {
	if s == nil {
		s = &keptScratch{}
	}
	d := keptDecoder{b: kept, scratch: s}
	return d.fields(func(key string) (uint, bool) {
		switch key {
		case "name":
			return 1 << 0, d.str(&c.Name)
		case "ok":
			return 1 << 1, d.bool(&c.OK)
		case "skipped":
			return 1 << 2, d.str(&c.SkipReason)
		case "duration_s":
			return 1 << 3, d.float(&c.DurationS)
		case "class":
			return 1 << 4, d.str(&c.Class)
		case "class_why":
			return 1 << 5, d.str(&c.ClassWhy)
		case "checks":
			return 1 << 6, d.checks(&c.Checks)
		case "attempts":
			return 1 << 7, d.int(&c.Attempts)
		case "log":
			return 1 << 8, d.object((*[]byte)(&c.Log))
		case "class_by":
			return 1 << 9, d.str(&c.ClassBy)
		}
		return 0, false
	}) && d.i == len(d.b)
}

// fields consumes an object, each of whose fields field decodes, saying
// which of at most 64 it is (a bit) and whether it decoded; a key it does
// not know, or one that comes twice, fails the object.
func (d *keptDecoder) fields(field func(key string) (uint, bool)) bool {
	if !d.byte('{') {
		return false
	}
	var seen uint
	for first := true; !d.byte('}'); first = false {
		if !first && !d.byte(',') {
			return false
		}
		key, ok := d.key()
		if !ok {
			return false
		}
		bit, ok := field(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return true
}

// keptDecoder reads compact JSON from b[i].
type keptDecoder struct {
	b       []byte
	i       int
	scratch *keptScratch
}

// keptScratch is what decodeKeptDirect keeps from one case to the next.
type keptScratch struct {
	// names interns the check names read (nil: none is interned).
	names map[string]string
	// sets interns checks arrays by their compact JSON (nil: none is
	// interned). A held case's checks were most of its memory (a
	// kvcached case's 20-odd checks, 120 bytes each); a passing case of
	// the kvcached harness, or of ci-report's runner for the checks whose
	// details carry no measure, writes the same array as every other case
	// of its kind, which is then held once. Identical bytes decode to
	// identical values, so sharing changes nothing a reader sees; readers
	// of a case's checks never write to them in place (merge and render
	// copy before they change a check: dropBadMargins, redactCase,
	// thresholds).
	sets map[string][]Check
	// checks holds a case's checks while they are read: a case holds them
	// in a slice of their number, allocated once, instead of every slice
	// appending grew through (a case of a kvcached part has 20-odd checks
	// of 120 bytes: six allocations and the copies between them).
	checks []Check
}

// Bounds of what one file's scratch interns, whatever the file: at most
// maxInterned names of up to maxInternedLen bytes, and maxInternedSets
// checks arrays of up to maxInternedSetLen bytes of JSON each (about 5 MiB
// in all at worst). A value beyond them is decoded as it comes, unshared.
const (
	maxInterned       = 4096
	maxInternedLen    = 128
	maxInternedSets   = 512
	maxInternedSetLen = 4096
)

// name consumes a check's name, interned.
func (d *keptDecoder) name(s *string) bool {
	t, ok := d.text()
	if !ok {
		return false
	}
	names := d.scratch.names
	if n, found := names[string(t)]; found {
		*s = n
		return true
	}
	*s = string(t)
	if names != nil && len(names) < maxInterned && len(t) <= maxInternedLen {
		names[*s] = *s
	}
	return true
}

// byte consumes c when it is next.
func (d *keptDecoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// text consumes a string without escapes, valid UTF-8, and returns its text.
func (d *keptDecoder) text() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// key consumes an object's key and its colon.
func (d *keptDecoder) key() (string, bool) {
	k, ok := d.text()
	if !ok || !d.byte(':') {
		return "", false
	}
	return string(k), true
}

func (d *keptDecoder) str(s *string) bool {
	t, ok := d.text()
	if ok {
		*s = string(t)
	}
	return ok
}

func (d *keptDecoder) bool(v *bool) bool {
	b := d.b[d.i:]
	switch {
	case len(b) >= 4 && string(b[:4]) == "true":
		*v, d.i = true, d.i+4
	case len(b) >= 5 && string(b[:5]) == "false":
		*v, d.i = false, d.i+5
	default:
		return false
	}
	return true
}

// number consumes a JSON number's text (the record is valid JSON: it ends
// where a separator or a closing bracket does).
func (d *keptDecoder) number() (string, bool) {
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == ',' || c == '}' || c == ']' {
			break
		}
		if c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' && c-'0' >= 10 {
			return "", false
		}
		d.i++
	}
	return string(d.b[start:d.i]), d.i > start
}

func (d *keptDecoder) float(v *float64) bool {
	s, ok := d.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	*v = f
	return err == nil
}

func (d *keptDecoder) floatPtr(v **float64) bool {
	var f float64
	if !d.float(&f) {
		return false
	}
	*v = &f
	return true
}

func (d *keptDecoder) int(v *int) bool {
	s, ok := d.number()
	if !ok {
		return false
	}
	n, err := strconv.Atoi(s)
	*v = n
	return err == nil
}

// object consumes an object and keeps its bytes, as a json.RawMessage
// field decodes it.
func (d *keptDecoder) object(v *[]byte) bool {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return false
	}
	end := skipValue(d.b, d.i)
	if end < 0 {
		return false
	}
	*v = append([]byte(nil), d.b[d.i:end]...)
	d.i = end
	return true
}

// checks consumes a checks array into a slice of its number; an array the
// scratch interns is not decoded again, and a new one is interned while
// there is room.
func (d *keptDecoder) checks(v *[]Check) bool {
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return false
	}
	var raw []byte
	if sets := d.scratch.sets; sets != nil {
		end := skipValue(d.b, d.i)
		if end < 0 {
			return false
		}
		raw = d.b[d.i:end]
		if shared, found := sets[string(raw)]; found {
			*v, d.i = shared, end
			return true
		}
	}
	d.i++
	checks := d.scratch.checks[:0]
	defer func() {
		clear(checks) // holds no case's strings past its decoding
		if cap(checks) <= maxScratchChecks {
			d.scratch.checks = checks[:0]
		}
	}()
	for first := true; !d.byte(']'); first = false {
		if !first && !d.byte(',') {
			return false
		}
		checks = append(checks, Check{})
		if !d.check(&checks[len(checks)-1]) {
			return false
		}
	}
	*v = append(make([]Check, 0, len(checks)), checks...)
	if sets := d.scratch.sets; sets != nil && len(sets) < maxInternedSets && len(raw) <= maxInternedSetLen {
		sets[string(raw)] = *v
	}
	return true
}

// maxScratchChecks bounds the checks keptScratch keeps between cases.
const maxScratchChecks = 1024

func (d *keptDecoder) check(ch *Check) bool {
	return d.fields(func(key string) (uint, bool) {
		switch key {
		case "name":
			return 1 << 0, d.name(&ch.Name)
		case "ok":
			return 1 << 1, d.bool(&ch.OK)
		case "detail":
			return 1 << 2, d.str(&ch.Detail)
		case "kind":
			return 1 << 3, d.str(&ch.Kind)
		case "caused_by":
			return 1 << 4, d.str(&ch.CausedBy)
		case "value":
			return 1 << 5, d.floatPtr(&ch.Value)
		case "bar":
			return 1 << 6, d.floatPtr(&ch.Bar)
		case "unit":
			return 1 << 7, d.str(&ch.Unit)
		case "must":
			return 1 << 8, d.str(&ch.Must)
		}
		return 0, false
	})
}
