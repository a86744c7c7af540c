package collect

// interner shares, across the cases of one file, the checks arrays and check
// names that thousands of cases repeat (most of a held case's memory).
// Readers never write to shared checks in place (merge and render copy
// before they change a check).
type interner struct {
	names map[string]string  // a check name → its one copy
	sets  map[string][]Check // a checks array's compact JSON → its one copy
}

// Bounds of what one file's interner holds (about 5 MiB at worst).
const (
	maxInterned       = 4096
	maxInternedLen    = 128
	maxInternedSets   = 512
	maxInternedSetLen = 4096
)

// share replaces *checks, decoded from raw (nil: not known), by the copy
// held for the same bytes, or holds it while there is room.
func (in *interner) share(raw []byte, checks *[]Check) {
	if in.names == nil {
		in.names, in.sets = map[string]string{}, map[string][]Check{}
	}
	if shared, found := in.sets[string(raw)]; raw != nil && found {
		*checks = shared
		return
	}
	for i := range *checks {
		ch := &(*checks)[i]
		if n, found := in.names[ch.Name]; found {
			ch.Name = n
		} else if len(in.names) < maxInterned && len(ch.Name) <= maxInternedLen {
			in.names[ch.Name] = ch.Name
		}
	}
	if raw != nil && *checks != nil && len(in.sets) < maxInternedSets && len(raw) <= maxInternedSetLen {
		in.sets[string(raw)] = *checks
	}
}
