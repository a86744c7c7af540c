module github.com/ovg-project/ci-report

go 1.26.8

require (
	github.com/NVIDIA/go-nvml v0.13.4-1
	github.com/go-json-experiment/json v1.27.2
	github.com/google/go-cmp v0.7.0
	github.com/google/go-github/v60 v60.0.0
	github.com/mattn/go-runewidth v0.0.19
	github.com/yuin/goldmark v1.8.7
	golang.org/x/oauth2 v0.38.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	golang.org/x/text v0.44.0
	golang.org/x/tools v0.52.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.6.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
)
