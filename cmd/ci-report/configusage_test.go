package main

import (
	"flag"
	"reflect"
	"strings"
	"testing"

	"github.com/ovg-project/ci-report/render"
)

// TestConfigUsageNamesEveryKey: the --config flag's usage (render's and
// post's help) names every key the config file takes, so that a key added
// to render.Config cannot be left out of the help.
func TestConfigUsageNamesEveryKey(t *testing.T) {
	var r renderInputs
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	r.bind(fs)
	usage := fs.Lookup("config").Usage
	typ := reflect.TypeOf(render.Config{})
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !strings.Contains(usage, name) {
			t.Errorf("--config usage does not name the config key %q: %s", name, usage)
		}
	}
}
