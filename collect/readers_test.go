package collect

import "io"

// The readers of single files, as tests call them: the loader
// (LoadPartsWith) opens part files through readOpened and readJSONIn.

// ReadJSONFile decodes the JSON file at path into v, refusing files over
// limit bytes, anything but a regular file (see openPath) and, where v is a
// struct, a file that is null. Errors name the file and, for a value of the
// wrong type, the field: `read /x/setup.json: cases[2].tp: want integer,
// got string`.
func ReadJSONFile(path string, limit int64, v any) error {
	f, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = decodeFile(f, path, limit, v)
	return err
}

// LoadParts is LoadPartsWith without options.
func LoadParts(paths []string) ([]Part, error) { return LoadPartsWith(paths, LoadOptions{}) }

// ScanSummary is readSummary keeping logs.
func ScanSummary(r io.Reader) (*SummaryResult, error) { return readSummary(r, false) }

// ReadSummary reads the summary.json at path without its phases (see
// ScanSummary); errors name the file and the field. Only a regular file is
// read.
func ReadSummary(path string) (*SummaryResult, error) {
	f, err := OpenRegular(path)
	return readOpened(f, err, path, false, readSummary)
}

// ScanCasesJSONL is readCasesJSONL keeping logs.
func ScanCasesJSONL(r io.Reader) (*JSONLResult, error) { return readCasesJSONL(r, false) }

// ReadCasesJSONL reads the cases.jsonl at path (see ScanCasesJSONL). Only a
// regular file is read.
func ReadCasesJSONL(path string) (*JSONLResult, error) {
	f, err := OpenRegular(path)
	return readOpened(f, err, path, false, readCasesJSONL)
}
