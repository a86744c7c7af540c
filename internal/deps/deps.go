package deps

import (
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/go-github/v60/github"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/yuin/goldmark"
	_ "golang.org/x/oauth2"
)
