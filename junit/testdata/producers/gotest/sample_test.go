// Sample for junit/producers_test.go (TestProducers), run by gotestsum --rerun-fails.
package sample

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestPass(t *testing.T) {}

func TestFail(t *testing.T) { t.Fatal("want 2, got 3") }

func TestSkip(t *testing.T) { t.Skip("needs a GPU") }

func TestSub(t *testing.T) {
	for _, n := range []int{1, 2, 3} {
		t.Run("n="+strconv.Itoa(n), func(t *testing.T) {
			if n == 3 {
				t.Errorf("n=%d is odd", n)
			}
		})
	}
	t.Run("same", func(t *testing.T) {})
	t.Run("same", func(t *testing.T) {})
}

func TestFlaky(t *testing.T) {
	p := filepath.Join(os.Getenv("FLAKY_DIR"), "count")
	b, _ := os.ReadFile(p)
	n, _ := strconv.Atoi(string(b))
	os.WriteFile(p, []byte(strconv.Itoa(n+1)), 0o644)
	if n == 0 {
		t.Fatal("first attempt fails")
	}
}
