//go:build !linux

package main

import "path/filepath"

// pseudoFS names the kernel pseudo filesystem path lies on: without
// Linux's statfs magic numbers, the conventional mount points /proc and
// /sys, the path's links followed; "" elsewhere.
func pseudoFS(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	if real, err = filepath.Abs(real); err != nil {
		return ""
	}
	for _, root := range []string{"/proc", "/sys"} {
		if real == root || len(real) > len(root) && real[:len(root)+1] == root+"/" {
			return root
		}
	}
	return ""
}
