package engine

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "  docker   exec -i  ci-vllm ", want: []string{"docker", "exec", "-i", "ci-vllm"}},
		{in: `kvctl --x 'a b'`, want: []string{"kvctl", "--x", "a b"}},
		{in: `sh -c "echo \"hi\" \$HOME"`, want: []string{"sh", "-c", `echo "hi" $HOME`}},
		{in: `a\ b c`, want: []string{"a b", "c"}},
		{in: `''`, want: []string{""}},
		{in: "a\tb\nc", want: []string{"a", "b", "c"}},
		{in: `'unterminated`, wantErr: true},
		{in: `trailing\`, wantErr: true},
	} {
		got, err := SplitCommand(tc.in)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
