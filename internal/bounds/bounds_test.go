package bounds

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Quote never shows more than MaxQuoted characters of the value, "…"
// included, whatever its size or encoding.
func TestQuoteCuts(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("x", 80<<20), strings.Repeat("é", 5000), "\xff" + strings.Repeat("y", 300)} {
		q := Quote(s)
		inner := Cut(s)
		if n := utf8.RuneCountInString(inner); n > MaxQuoted {
			t.Errorf("Cut of %d bytes keeps %d characters, want at most %d", len(s), n, MaxQuoted)
		}
		if len(s) > MaxQuoted && !strings.HasSuffix(inner, "…") {
			t.Errorf("Cut of %d bytes is not marked: %.20q", len(s), inner)
		}
		if len(q) > 4*MaxQuoted+2 {
			t.Errorf("Quote of %d bytes is %d bytes", len(s), len(q))
		}
	}
}

type part struct {
	Cases []string `json:"cases" bounds:"3"`
}

type file struct {
	Title  string            `json:"title"`
	Titles map[string]string `json:"titles"`
	Parts  []part            `json:"parts"`
	Skip   string            `json:"-"`
	Raw    []byte            `json:"raw"`
	Inner  *struct {
		HFID string `json:"hf_id"`
	} `json:"inner"`
}

// Check names the first value over a limit by its path in the file.
func TestCheckNamesThePath(t *testing.T) {
	big := strings.Repeat("b", MaxString+1)
	many := make(map[string]string, MaxList+1)
	for i := range MaxList + 1 {
		many[strings.Repeat("k", i+1)] = ""
	}
	for _, tc := range []struct {
		name string
		v    file
		want string
	}{
		{"fine", file{Title: strings.Repeat("t", MaxString), Skip: big, Raw: []byte(big)}, ""},
		{"title", file{Title: big}, "title: 4097 bytes, over the limit of 4096 bytes"},
		{"map value", file{Titles: map[string]string{"b": "", "a": big}}, `titles["a"]: 4097 bytes`},
		{"map key", file{Titles: map[string]string{big: ""}}, "titles key: 4097 bytes"},
		{"map entries", file{Titles: many}, "titles: 257 entries, over the limit of 256"},
		{"tagged list", file{Parts: []part{{}, {Cases: []string{"a", "b", "c", "d"}}}}, "parts[1].cases: 4 entries, over the limit of 3"},
		{"pointer", file{Inner: &struct {
			HFID string `json:"hf_id"`
		}{big}}, "inner.hf_id: 4097 bytes"},
	} {
		err := Check(&tc.v)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		case err != nil && len(err.Error()) > 300:
			t.Errorf("%s: message of %d bytes", tc.name, len(err.Error()))
		}
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{0, false}, {1, true}, {8, true}, {9, false}, {-1, false}, {100000, false}} {
		if err := Int("tp", tc.n, 1, 8); (err == nil) != tc.ok {
			t.Errorf("tp %d: %v", tc.n, err)
		}
	}
}
