// Command modzip writes the module zip of the committed tree as the Go module
// proxy serves it (go.dev/ref/mod#zip-files): every `git ls-files` file under
// "<module>@<version>/", without nested modules' subtrees. Used by
// .ci/go-install-check; a dot directory, so ./... leaves it out.
//
// Usage: go run ./.ci/modzip MODULE@VERSION OUT.zip
package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
)

func main() {
	if len(os.Args) != 3 || !strings.Contains(os.Args[1], "@") {
		fmt.Fprintln(os.Stderr, "usage: modzip MODULE@VERSION OUT.zip")
		os.Exit(2)
	}
	if err := write(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "modzip:", err)
		os.Exit(1)
	}
}

func write(prefix, out string) error {
	list, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	files := strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00")
	var nested []string // directories of nested modules
	for _, f := range files {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	zf, err := os.Create(out)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(zf)
	n := 0
files:
	for _, f := range files {
		for _, d := range nested {
			if strings.HasPrefix(f, d) {
				continue files
			}
		}
		if err := add(zw, prefix+"/"+f, f); err != nil {
			return err
		}
		n++
	}
	if err := zw.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "modzip: %s: %d files (%d nested modules left out)\n", out, n, len(nested))
	return zf.Close()
}

func add(zw *zip.Writer, name, file string) error {
	src, err := os.Open(file)
	if err != nil {
		return err
	}
	defer src.Close()
	w, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, src)
	return err
}
