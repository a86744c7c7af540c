package benchtree

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// WriteSmall writes a tree of t.Parts parts holding t.Cases small cases in all
// under root, as `import junit` writes a pytest suite's (docs/formats.md §4.7):
// no setup cases, a compact summary.json, one case in 50 failing with a
// one-line detail. It is the input of the per-case memory bound and returns
// the bytes written.
func WriteSmall(root string, t Tree) (int64, error) {
	var total int64
	first := 0
	for p := 0; p < t.Parts; p++ {
		dir := filepath.Join(root, fmt.Sprintf("unit-%d", p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		n := t.partCases(p)
		for name, body := range map[string]string{
			"part.json":  fmt.Sprintf(`{"format":1,"part":"unit-%d","profile":"unit","complete":true,"planned":[]}`, p),
			"setup.json": `{"profile":"unit","kvcached_sha":null,"gpus":[],"engines":{},"model_revisions":{},"workload":[],"checks":{},"cases":[]}`,
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				return 0, err
			}
			total += int64(len(body))
		}
		size, err := create(filepath.Join(dir, "summary.json"), func(w *bufio.Writer) {
			ok := true
			for i := first; i < first+n; i++ {
				ok = ok && i%50 != 7
			}
			fmt.Fprintf(w, `{"ok":%t,"cases":[`, ok)
			for i := first; i < first+n; i++ {
				if i > first {
					w.WriteByte(',')
				}
				name := fmt.Sprintf("tests.test_module_%d::test_prefill[seed-%d]", i/50, i)
				d := fmt.Sprintf("%d.%03d", i%7, (i*37)%1000)
				if i%50 == 7 {
					fmt.Fprintf(w, `{"name":%q,"ok":false,"duration_s":%s,"checks":[{"name":"failure","ok":false,"detail":"AssertionError: %d/10 requests finished after 500 engine steps","kind":"failure"}]}`, name, d, i%10)
				} else {
					fmt.Fprintf(w, `{"name":%q,"ok":true,"duration_s":%s,"checks":[]}`, name, d)
				}
			}
			w.WriteString("]}")
		})
		if err != nil {
			return 0, err
		}
		first += n
		total += size
	}
	return total, nil
}
