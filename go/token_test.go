package mpk

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"testing"
)

// tokenWalk reads one value of the stream by tokens (header reads for arrays and maps, Decode for
// the rest) and rebuilds it, as a migrating vmihailenco user's loop over DecodeArrayLen /
// DecodeMapLen would.
func tokenWalk(dec *Decoder) (any, error) {
	typ, err := dec.PeekType()
	if err != nil {
		return nil, err
	}
	switch typ {
	case ArrayType:
		n, err := dec.ReadArrayHeader()
		if err != nil {
			return nil, err
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = tokenWalk(dec); err != nil {
				return nil, err
			}
		}
		return a, nil
	case MapType:
		n, err := dec.ReadMapHeader()
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		for i := 0; i < n; i++ {
			var k string
			if err := dec.Decode(&k); err != nil {
				return nil, err
			}
			if m[k], err = tokenWalk(dec); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	var v any
	err = dec.Decode(&v)
	return v, err
}

// TestStreamTokenReader: values read token by token come out as Decode gives them, whatever the
// chunks the reader returns, and the stream goes on after them (a Skip inside a map, then the
// next top-level values, then io.EOF).
func TestStreamTokenReader(t *testing.T) {
	values := []any{
		map[string]any{"a": []any{int64(1), int64(-300), "x", []any{}}, "b": map[string]any{"c": nil, "d": 2.5}, "e": []any{[]any{true}}},
		[]any{},
		"tail",
	}
	var whole []byte
	for _, v := range values {
		b, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		whole = append(whole, b...)
	}
	for size := 1; size <= len(whole); size++ {
		dec := NewDecoder(&chunked{data: whole, size: size})
		for i, want := range values {
			got, err := tokenWalk(dec)
			if err != nil {
				t.Fatalf("chunks of %d, value %d: %v", size, i, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("chunks of %d, value %d: %v, want %v", size, i, got, want)
			}
		}
		if _, err := dec.PeekType(); err != io.EOF {
			t.Fatalf("chunks of %d: at the end %v", size, err)
		}
	}
	// Skip of a pair's value inside a map read by its header
	dec := NewDecoder(bytes.NewReader(whole))
	if n, err := dec.ReadMapHeader(); n != 3 || err != nil {
		t.Fatalf("map header %d %v", n, err)
	}
	for i := 0; i < 3; i++ {
		var k string
		if err := dec.Decode(&k); err != nil {
			t.Fatal(err)
		}
		if err := dec.Skip(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := dec.ReadArrayHeader(); n != 0 || err != nil {
		t.Fatalf("empty array %d %v", n, err)
	}
	var s string
	if err := dec.Decode(&s); err != nil || s != "tail" || dec.InputOffset() != int64(len(whole)) {
		t.Fatalf("%q %v at %d", s, err, dec.InputOffset())
	}
}

// TestStreamTokenErrors: a header read of another type is a type error and leaves the value to
// be read; 0xc1 is InvalidByte; a stream that ends inside a container read by a header is
// Truncated (not io.EOF); header counts obey Limits.Array/Map, and depth counts the containers
// opened by header reads, for header reads and for the values decoded inside them.
func TestStreamTokenErrors(t *testing.T) {
	hexDec := func(s string, lim *Limits) *Decoder {
		b, _ := hex.DecodeString(s)
		d := NewDecoder(bytes.NewReader(b))
		if lim != nil {
			d.SetOptions(DecodeOptions{Limits: lim})
		}
		return d
	}
	kind := func(err error) Kind {
		var de *DecodeError
		if errors.As(err, &de) {
			return de.Kind
		}
		return 0
	}
	dec := hexDec("a17891c0", nil) // "x", [nil]
	var te *UnmarshalTypeError
	if _, err := dec.ReadArrayHeader(); !errors.As(err, &te) || te.Offset != 0 || te.Value != "str" {
		t.Fatalf("array header on a str: %v", err)
	}
	if _, err := dec.ReadMapHeader(); !errors.As(err, &te) {
		t.Fatalf("map header on a str: %v", err)
	}
	var s string
	if err := dec.Decode(&s); err != nil || s != "x" {
		t.Fatalf("the str after the type error: %q %v", s, err)
	}
	if n, err := dec.ReadArrayHeader(); n != 1 || err != nil {
		t.Fatalf("%d %v", n, err)
	}

	if _, err := hexDec("c1", nil).PeekType(); kind(err) != InvalidByte {
		t.Fatalf("0xc1: %v", err)
	}

	dec = hexDec("9201", nil) // an array of 2 that ends after one element
	dec.ReadArrayHeader()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	err := dec.Decode(&x)
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != Truncated || de.Offset != 2 {
		t.Fatalf("end inside a container: %v", err)
	}
	if _, err := hexDec("dc00", nil).ReadArrayHeader(); kind(err) != Truncated {
		t.Fatalf("a cut array16 head: %v", err)
	}

	lim := DefaultLimits()
	lim.Array, lim.Map = 2, 1
	if _, err := hexDec("93010203", &lim).ReadArrayHeader(); kind(err) != LengthLimit {
		t.Fatalf("array over the limit: %v", err)
	}
	if _, err := hexDec("82a161c0a162c0", &lim).ReadMapHeader(); kind(err) != LengthLimit {
		t.Fatalf("map over the limit: %v", err)
	}

	lim = DefaultLimits()
	lim.Depth = 3
	dec = hexDec("91919191c0", &lim)
	for i := 0; i < 3; i++ {
		if _, err := dec.ReadArrayHeader(); err != nil {
			t.Fatalf("header %d: %v", i, err)
		}
	}
	if _, err := dec.ReadArrayHeader(); kind(err) != DepthLimit {
		t.Fatalf("a fourth level by header: %v", err)
	}
	dec = hexDec("9191919191c0", &lim)
	dec.ReadArrayHeader()
	dec.ReadArrayHeader()
	if err := dec.Decode(&x); kind(err) != DepthLimit {
		t.Fatalf("two levels by header and three by Decode: %v", err)
	}
	dec = hexDec("919191c0", &lim)
	dec.ReadArrayHeader()
	if err := dec.Decode(&x); err != nil || !reflect.DeepEqual(x, []any{[]any{nil}}) {
		t.Fatalf("three levels: %v %v", x, err)
	}
}
