package collect

// interner shares, across the cases of one file, the checks arrays and check
// names that thousands of cases repeat (most of a held case's memory).
// Identical bytes decode to identical values, so sharing changes nothing a
// reader sees; readers never write to shared checks in place (merge and render
// copy before they change a check).
type interner struct {
	// names maps a check name to its one copy (nil until the first case).
	names map[string]string
	// sets maps a checks array's compact JSON, as the case reader kept it,
	// to its one decoded copy.
	sets map[string][]Check
}

// Bounds of what one file's interner holds, whatever the file: at most
// maxInterned names of up to maxInternedLen bytes, and maxInternedSets
// checks arrays of up to maxInternedSetLen bytes of JSON each (about 5 MiB
// in all at worst). A value beyond them is kept as it was decoded, unshared.
const (
	maxInterned       = 4096
	maxInternedLen    = 128
	maxInternedSets   = 512
	maxInternedSetLen = 4096
)

// share replaces *checks, decoded from raw (its JSON as kept; nil: not
// known), by the copy held for the same bytes, or holds it while there is
// room, interning its names.
func (in *interner) share(raw []byte, checks *[]Check) {
	if in.names == nil {
		in.names, in.sets = map[string]string{}, map[string][]Check{}
	}
	if raw != nil {
		if shared, found := in.sets[string(raw)]; found {
			*checks = shared
			return
		}
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
