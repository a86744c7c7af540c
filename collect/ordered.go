package collect

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Ordered is a JSON object that keeps the order of its keys, as read from the
// file or as set. The formats require it for every object whose order shows in
// a report (checks, engines, env, model_revisions, perf models); Go maps lose it.
// The zero value is an empty object ready to use.
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
func (o *Ordered[V]) Get(k string) (V, bool) {
	var zero V
	if o == nil || o.m == nil {
		return zero, false
	}
	v, ok := o.m[k]
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

// MarshalJSON writes the object with its keys in order.
func (o Ordered[V]) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads an object keeping its key order. A repeated key keeps
// its first place and its last value, as encoding/json would keep the value.
// null leaves the object empty.
func (o *Ordered[V]) UnmarshalJSON(data []byte) error {
	o.keys, o.m = nil, nil
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("got %s, want an object", jsonKind(tok))
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		k := kt.(string)
		var v V
		if err := dec.Decode(&v); err != nil {
			return &fieldError{Field: k, Err: describeJSONError(err)}
		}
		o.Set(k, v)
	}
	_, err = dec.Token()
	return err
}

func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "array"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "bool"
	}
	return "value"
}

// Env is an environment: an object of name → value, or (older setup.json
// files) an array of [name, value] pairs. Both forms read into the same
// ordered object; it is always written as an object.
type Env struct {
	Ordered[string]
}

// UnmarshalJSON accepts both forms of an environment.
func (e *Env) UnmarshalJSON(data []byte) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var pairs [][]string
		if err := json.Unmarshal(data, &pairs); err != nil {
			return fmt.Errorf("env as [name, value] pairs: %w", err)
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
	return e.Ordered.UnmarshalJSON(data)
}

// MarshalJSON writes the environment as an object.
func (e Env) MarshalJSON() ([]byte, error) { return e.Ordered.MarshalJSON() }
