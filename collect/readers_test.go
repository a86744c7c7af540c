package collect

import (
	"context"
	"io"

	"github.com/ovg-project/ci-report/internal/safefile"
)

// The readers of single files, as tests call them: the loader
// (LoadPartsWith) opens part files through readOpened and readJSONIn.

// ReadJSONFile decodes the JSON file at path into v, refusing a file over
// k's cap, anything but a regular file (safefile.Open) and, where v is a
// struct, a file that is null.
func ReadJSONFile(path string, k safefile.Kind, v any) error {
	data, err := safefile.Read(path, k)
	if err != nil {
		return err
	}
	return DecodeFile(path, data, v)
}

// LoadParts is LoadPartsWith without options.
func LoadParts(paths []string) ([]Part, error) { return LoadPartsWith(paths, LoadOptions{}) }

// ScanSummary is readSummary keeping logs.
func ScanSummary(r io.Reader) (*readResult, error) { return readSummary(r, false) }

// ReadSummary reads the summary.json at path without its phases (see
// ScanSummary); errors name the file and the field. Only a regular file is
// read.
func ReadSummary(path string) (*readResult, error) {
	f, err := safefile.Open(path)
	return readOpened(context.Background(), f, err, path, false, readSummary)
}

// ScanCasesJSONL is readCasesJSONL keeping logs.
func ScanCasesJSONL(r io.Reader) (*readResult, error) { return readCasesJSONL(r, false) }

// ReadCasesJSONL reads the cases.jsonl at path (see ScanCasesJSONL). Only a
// regular file is read.
func ReadCasesJSONL(path string) (*readResult, error) {
	f, err := safefile.Open(path)
	return readOpened(context.Background(), f, err, path, false, readCasesJSONL)
}
