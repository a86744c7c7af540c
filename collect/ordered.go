package collect

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Ordered is a JSON object that keeps the order of its keys, for every object
// whose order shows in a report; Go maps lose it. The zero value is empty.
type Ordered[V any] struct {
	keys []string
	m    map[string]V
}

// Keys returns the keys in order. The slice must not be modified.
func (o *Ordered[V]) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

// Len returns the number of keys.
func (o *Ordered[V]) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Get returns the value of key k and whether it is present.
func (o *Ordered[V]) Get(k string) (v V, ok bool) {
	if o != nil {
		v, ok = o.m[k]
	}
	return v, ok
}

// Set sets key k to v; a new key goes last, an existing key keeps its place.
func (o *Ordered[V]) Set(k string, v V) {
	if o.m == nil {
		o.m = make(map[string]V)
	}
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// MarshalJSON writes the object with its keys in order, each value as
// encoding/json writes it.
func (o Ordered[V]) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	v1 := jsonv1.DefaultOptionsV1()
	enc := jsontext.NewEncoder(&buf, v1)
	err := enc.WriteToken(jsontext.BeginObject)
	for _, k := range o.keys {
		if err == nil {
			err = enc.WriteToken(jsontext.String(k))
		}
		if err == nil {
			if err = json.MarshalEncode(enc, o.m[k], v1); err != nil {
				err = fmt.Errorf("key %q: %w", k, err)
			}
		}
	}
	if err == nil {
		err = enc.WriteToken(jsontext.EndObject)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// UnmarshalJSONFrom reads an object keeping its key order (a repeated key
// keeps its first place and last value); null leaves it empty.
func (o *Ordered[V]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	o.keys, o.m = nil, nil
	switch k := dec.PeekKind(); k {
	case '{':
	case 'n', 0:
		_, err := dec.ReadToken()
		return err
	default:
		return &kindError{want: "object", got: kindName(k)}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		k := tok.String()
		var v V
		if err := json.UnmarshalDecode(dec, &v); err != nil {
			return err
		}
		o.Set(k, v)
	}
	_, err := dec.ReadToken()
	return err
}

// UnmarshalJSON is UnmarshalJSONFrom for encoding/json.
func (o *Ordered[V]) UnmarshalJSON(data []byte) error { return decodeJSON(data, o) }

// Env is an environment: an object of name → value, or (older setup.json
// files) an array of [name, value] pairs; it is always written as an object.
type Env struct {
	Ordered[string]
}

// UnmarshalJSONFrom accepts both forms of an environment.
func (e *Env) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '[' {
		return e.Ordered.UnmarshalJSONFrom(dec)
	}
	var pairs [][]string
	if err := json.UnmarshalDecode(dec, &pairs); err != nil {
		return err
	}
	e.keys, e.m = nil, nil
	for i, p := range pairs {
		if len(p) != 2 {
			return fmt.Errorf("env pair %d has %d elements, want 2", i, len(p))
		}
		e.Set(p[0], p[1])
	}
	return nil
}

// UnmarshalJSON is UnmarshalJSONFrom for encoding/json.
func (e *Env) UnmarshalJSON(data []byte) error { return decodeJSON(data, e) }
