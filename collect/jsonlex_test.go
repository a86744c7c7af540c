package collect

import "testing"

func TestStringLexer(t *testing.T) {
	// o: outside, s: string text, e: escape, c: closing quote.
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, "oosc" + "ooo"},
		{`"a\"b"`, "ose" + "esc"},
		{`["\\",""]`, "oo" + "eec" + "o" + "oc" + "o"},
		{`"\u00e9x"`, "o" + "ee" + "sssss" + "c"},
	} {
		var l StringLexer
		got := make([]byte, len(tc.in))
		for i := 0; i < len(tc.in); i++ {
			got[i] = "osec"[l.Step(tc.in[i])]
		}
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
		}
	}
}
