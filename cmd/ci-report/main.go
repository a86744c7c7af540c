// Command ci-report runs the GPU end-to-end CI of kvcached on vLLM and SGLang
// and reports it on GitHub. See README.md.
package main

import "os"

func main() {
	version = releaseVersion(version, readBuildInfo())
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
