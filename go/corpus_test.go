package mpk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/internal/typed"
)

// corpusCase is one case of spec/vectors (or of testdata/cases, in the same format).
type corpusCase struct {
	Name     string
	Value    typed.Value
	HasValue bool
	Forms    [][]byte // positive: every encoding, shortest first
	Loose    bool     // the value is a loose `number`: the encoding may be any listed form
	Input    []byte   // negative: the bytes
	Kind     mpk.Kind
	Offset   int64
	Limits   *mpk.Limits
	Strict   bool

	// An encode-error case (spec/vectors/encode_errors.json): a value MessagePack cannot carry
	// and the kind an encoder refuses it with. ValueErr is why the value could not be parsed
	// into Go's types (an int beyond 64 bits, an ext type beyond int8).
	EncodeError string
	ValueErr    error
}

func (c *corpusCase) options() mpk.DecodeOptions {
	return mpk.DecodeOptions{Limits: c.Limits, StrictUTF8: c.Strict}
}

// corpusFiles lists the shared corpus (relative to the repo root) and this folder's own cases.
func corpusFiles(t testing.TB) []string {
	var files []string
	for _, pattern := range []string{"../spec/vectors/*.json", "testdata/cases/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no corpus files found")
	}
	return files
}

func loadCases(t testing.TB, path string) []corpusCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.UseNumber()
	if tk, err := dec.Token(); err != nil || tk != json.Delim('[') {
		t.Fatalf("%s: not a JSON array", path)
	}
	var cases []corpusCase
	for dec.More() {
		c, err := parseCase(dec)
		if err != nil {
			t.Fatalf("%s case %d: %v", path, len(cases), err)
		}
		cases = append(cases, c)
	}
	return cases
}

func parseCase(dec *json.Decoder) (corpusCase, error) {
	var c corpusCase
	if tk, err := dec.Token(); err != nil || tk != json.Delim('{') {
		return c, fmt.Errorf("expected a case object")
	}
	// The value is parsed once the whole case is read: only then is it known whether a value
	// that does not fit Go's types is an error of the file or the point of the case.
	var valueKey string
	var valueRaw json.RawMessage
	for dec.More() {
		tk, err := dec.Token()
		if err != nil {
			return c, err
		}
		key := tk.(string)
		switch {
		case typed.Keys[key]:
			valueKey = key
			if err := dec.Decode(&valueRaw); err != nil {
				return c, err
			}
			c.HasValue, c.Loose = true, key == "number"
		case key == "encode_error":
			if err := dec.Decode(&c.EncodeError); err != nil {
				return c, err
			}
		case key == "msgpack":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return c, err
			}
			var one string
			var many []string
			if json.Unmarshal(raw, &one) == nil {
				if c.Input, err = typed.ParseHex(one); err != nil {
					return c, err
				}
			} else if err := json.Unmarshal(raw, &many); err == nil {
				for _, h := range many {
					b, err := typed.ParseHex(h)
					if err != nil {
						return c, err
					}
					c.Forms = append(c.Forms, b)
				}
			} else {
				return c, err
			}
		case key == "error":
			var s string
			if err := dec.Decode(&s); err != nil {
				return c, err
			}
			k, ok := mpk.ParseKind(s)
			if !ok {
				return c, fmt.Errorf("unknown error kind %q", s)
			}
			c.Kind = k
		case key == "offset":
			if err := dec.Decode(&c.Offset); err != nil {
				return c, err
			}
		case key == "limits":
			var m map[string]int64
			if err := dec.Decode(&m); err != nil {
				return c, err
			}
			lim := limitsFrom(m)
			c.Limits = &lim
		case key == "strict_utf8":
			if err := dec.Decode(&c.Strict); err != nil {
				return c, err
			}
		case key == "name":
			if err := dec.Decode(&c.Name); err != nil {
				return c, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return c, err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return c, err
	}
	if c.HasValue {
		vd := json.NewDecoder(bytes.NewReader(valueRaw))
		vd.UseNumber()
		var err error
		if c.Value, err = typed.ParseMember(vd, valueKey); err != nil {
			if c.EncodeError == "" {
				return c, err
			}
			c.ValueErr = err
		}
	}
	return c, nil
}

// limitsFrom changes the named limits of the defaults.
func limitsFrom(m map[string]int64) mpk.Limits {
	lim := mpk.DefaultLimits()
	for k, v := range m {
		switch k {
		case "depth":
			lim.Depth = uint32(v)
		case "str":
			lim.Str = uint32(v)
		case "bin":
			lim.Bin = uint32(v)
		case "ext":
			lim.Ext = uint32(v)
		case "array":
			lim.Array = uint32(v)
		case "map":
			lim.Map = uint32(v)
		}
	}
	return lim
}

// TestCorpus runs every case of every corpus file: each listed form decodes (through the reader,
// Unmarshal into RawMessage and into `any`, and the stream split every way), the value encodes
// to the shortest form, and each negative case fails with its kind at its offset.
func TestCorpus(t *testing.T) {
	for _, path := range corpusFiles(t) {
		cases := loadCases(t, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			for i, c := range cases {
				c := c
				t.Run(fmt.Sprintf("%d %s", i, c.Name), func(t *testing.T) {
					switch {
					case c.EncodeError != "":
						checkEncodeError(t, &c)
					case c.Forms != nil:
						checkPositive(t, &c)
					default:
						checkNegative(t, &c)
					}
				})
			}
		})
	}
}

func checkPositive(t *testing.T, c *corpusCase) {
	if !c.HasValue || len(c.Forms) == 0 {
		t.Fatal("positive case without a value or forms")
	}
	enc, err := typed.Encode(nil, c.Value)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if c.Loose {
		if !containsForm(c.Forms, enc) {
			t.Errorf("encode: %x is none of the listed forms", enc)
		}
	} else if !bytes.Equal(enc, c.Forms[0]) {
		t.Errorf("encode: got %x, want %x", enc, c.Forms[0])
	}
	opts := c.options()
	for _, form := range c.Forms {
		got, rest, err := typed.Decode(form)
		if err != nil || len(rest) != 0 || !typed.Equal(got, c.Value) {
			t.Errorf("reader on %x: err %v, %d left, equal %v", form, err, len(rest), typed.Equal(got, c.Value))
		}
		var raw mpk.RawMessage
		if err := opts.Unmarshal(form, &raw); err != nil || !bytes.Equal(raw, form) {
			t.Errorf("Unmarshal RawMessage %x: %v", form, err)
		}
		var x any
		err = opts.Unmarshal(form, &x)
		var te *mpk.UnmarshalTypeError
		if hasUnhashableKey(c.Value) {
			// Go cannot use a []byte, []any, map or Ext as a map key.
			if !errors.As(err, &te) {
				t.Errorf("Unmarshal any %x with an unhashable key: %v", form, err)
			}
		} else if err != nil {
			t.Errorf("Unmarshal any %x: %v", form, err)
		} else if eq, ok := anyEqual(x, c.Value); ok && !eq {
			t.Errorf("Unmarshal any %x: got %#v", form, x)
		}
		checkStream(t, form, opts)
	}
	// Marshal(Unmarshal(shortest)) gives the shortest form back when Go's map order (sorted
	// keys) is the case's order.
	if sortedMaps(c.Value) && !c.Loose {
		var x any
		if err := opts.Unmarshal(c.Forms[0], &x); err == nil {
			out, err := mpk.Marshal(x)
			if err != nil || !bytes.Equal(out, c.Forms[0]) {
				t.Errorf("Marshal(Unmarshal(%x)) = %x, %v", c.Forms[0], out, err)
			}
		}
	}
}

// checkEncodeError hands an encode-error case's value to the driver's encoder (the writer, with
// timestamps through MarshalAppend) and, built as Go values, to Marshal: both must refuse it,
// with *mpk.InvalidTimestampError for invalid_timestamp.
func checkEncodeError(t *testing.T, c *corpusCase) {
	if !c.HasValue || c.Forms != nil || c.Input != nil {
		t.Fatal("an encode-error case has one value and no msgpack")
	}
	if c.ValueErr != nil {
		if c.EncodeError != "bad_request" {
			t.Fatalf("the value does not parse: %v", c.ValueErr)
		}
		t.Skipf("the value cannot be built in Go's types (%v): nothing to refuse", c.ValueErr)
	}
	enc, err := typed.Encode(nil, c.Value)
	if err == nil {
		t.Fatalf("the driver's encoder accepted it: %x", enc)
	}
	if kind := typed.EncodeErrorKind(err); kind != c.EncodeError {
		t.Errorf("the driver's encoder: %v (%s), want %s", err, kind, c.EncodeError)
	}
	x, ok := goValue(c.Value)
	if !ok {
		return // an nsec beyond uint32: no mpk.Timestamp holds it
	}
	out, err := mpk.Marshal(x)
	var te *mpk.InvalidTimestampError
	switch {
	case err == nil:
		t.Errorf("Marshal accepted it: %x", out)
	case c.EncodeError == "invalid_timestamp" && !errors.As(err, &te):
		t.Errorf("Marshal: %v, want an *mpk.InvalidTimestampError", err)
	}
}

// goValue builds v from Go values that Marshal encodes as v; false when Go cannot hold it (a map
// key of an unhashable kind, an nsec beyond uint32).
func goValue(v typed.Value) (any, bool) {
	switch v.Kind {
	case typed.Nil:
		return nil, true
	case typed.Bool:
		return v.Bool, true
	case typed.Int, typed.Number:
		if v.Kind == typed.Number && !v.IsInt {
			return v.F, true
		}
		if v.Neg {
			return v.I, true
		}
		return v.U, true
	case typed.Float32:
		return float32(v.F), true
	case typed.Float64:
		return v.F, true
	case typed.Str:
		return string(v.Bytes), true
	case typed.Bin:
		return v.Bytes, true
	case typed.Ext:
		return mpk.Ext{Type: v.Ext, Data: v.Bytes}, true
	case typed.Timestamp:
		if v.Nsec < 0 || v.Nsec > math.MaxUint32 {
			return nil, false
		}
		return mpk.Timestamp{Sec: v.Sec, Nsec: uint32(v.Nsec)}, true
	case typed.Array:
		out := make([]any, len(v.Items))
		for i, item := range v.Items {
			x, ok := goValue(item)
			if !ok {
				return nil, false
			}
			out[i] = x
		}
		return out, true
	case typed.Map:
		out := make(map[any]any, len(v.Items)/2)
		for i := 0; i < len(v.Items); i += 2 {
			k, ok := goValue(v.Items[i])
			if !ok || hasUnhashableKey(typed.Value{Kind: typed.Map, Items: v.Items[i : i+1]}) {
				return nil, false
			}
			x, ok := goValue(v.Items[i+1])
			if !ok {
				return nil, false
			}
			out[k] = x
		}
		return out, true
	}
	return nil, false
}

func containsForm(forms [][]byte, b []byte) bool {
	for _, f := range forms {
		if bytes.Equal(f, b) {
			return true
		}
	}
	return false
}

func checkNegative(t *testing.T, c *corpusCase) {
	if c.Kind == 0 {
		t.Fatal("negative case without an error kind")
	}
	opts := c.options()
	var raw mpk.RawMessage
	expectError(t, "Unmarshal RawMessage", opts.Unmarshal(c.Input, &raw), c.Kind, c.Offset)
	var x any
	expectError(t, "Unmarshal any", opts.Unmarshal(c.Input, &x), c.Kind, c.Offset)
	if c.Kind != mpk.TrailingBytes {
		// The stream reports the same error whether the bytes come one at a time or at once.
		// It cannot check a container's count against bytes that have not come yet, so where
		// the one-shot decode says Truncated at a container head, the stream may first meet a
		// later error (`92 c1` is invalid_byte at 1); an ext -1 of a length no timestamp has is
		// invalid_timestamp as soon as its head arrives, where one-shot finds its payload cut off
		// first; and an empty stream is io.EOF.
		for _, r := range []io.Reader{&oneByteReader{c.Input}, bytes.NewReader(c.Input)} {
			dec := mpk.NewDecoder(r)
			dec.SetOptions(opts)
			err := dec.Decode(&raw)
			var de *mpk.DecodeError
			switch {
			case len(c.Input) == 0:
				if err != io.EOF {
					t.Errorf("stream of nothing: %v", err)
				}
			case c.Kind == mpk.Truncated && errors.As(err, &de) && de.Kind != mpk.Truncated:
				if de.Offset <= c.Offset && !(de.Kind == mpk.InvalidTimestamp && de.Offset == c.Offset) {
					t.Errorf("stream: got %v, want truncated at %d or an error after it", err, c.Offset)
				}
			default:
				expectError(t, "stream", err, c.Kind, c.Offset)
			}
		}
	}
	if c.Limits == nil && !c.Strict {
		_, err := mpk.Skip(c.Input)
		if c.Kind == mpk.TrailingBytes {
			if err != nil {
				t.Errorf("Skip: %v", err)
			}
		} else {
			expectError(t, "Skip", err, c.Kind, c.Offset)
		}
	}
}

func expectError(t *testing.T, what string, err error, kind mpk.Kind, offset int64) {
	t.Helper()
	var de *mpk.DecodeError
	if !errors.As(err, &de) {
		t.Errorf("%s: got %v, want %s at %d", what, err, kind, offset)
		return
	}
	if de.Kind != kind || de.Offset != offset {
		t.Errorf("%s: got %s at %d, want %s at %d", what, de.Kind, de.Offset, kind, offset)
	}
	if !strings.HasSuffix(de.Error(), fmt.Sprintf("at byte %d", de.Offset)) || !strings.HasPrefix(de.Error(), "mpk: ") {
		t.Errorf("%s: message %q", what, de.Error())
	}
}

// oneByteReader returns one byte per Read.
type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// chunkReader returns its chunks one per Read.
type chunkReader struct{ chunks [][]byte }

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.chunks) > 0 && len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	return n, nil
}

// checkStream feeds form to a Decoder one byte at a time and, up to 4 KiB, in two chunks split
// at every position: it must give back exactly form, then io.EOF.
func checkStream(t *testing.T, form []byte, opts mpk.DecodeOptions) {
	t.Helper()
	streamOnce(t, "one byte at a time", &oneByteReader{form}, form, opts)
	if len(form) <= 4096 {
		for i := 0; i <= len(form); i++ {
			r := &chunkReader{[][]byte{append([]byte{}, form[:i]...), append([]byte{}, form[i:]...)}}
			if !streamOnce(t, fmt.Sprintf("split at %d", i), r, form, opts) {
				return
			}
		}
	}
}

func streamOnce(t *testing.T, how string, r io.Reader, form []byte, opts mpk.DecodeOptions) bool {
	t.Helper()
	dec := mpk.NewDecoder(r)
	dec.SetOptions(opts)
	var raw mpk.RawMessage
	if err := dec.Decode(&raw); err != nil || !bytes.Equal(raw, form) {
		t.Errorf("stream %s of %x: got %x, %v", how, form, raw, err)
		return false
	}
	if dec.InputOffset() != int64(len(form)) {
		t.Errorf("stream %s: InputOffset %d, want %d", how, dec.InputOffset(), len(form))
	}
	if err := dec.Decode(&raw); err != io.EOF {
		t.Errorf("stream %s: after the value got %v, want io.EOF", how, err)
		return false
	}
	return true
}

// anyEqual compares a value decoded into an `any` with a case's value. ok is false when the
// value cannot be compared that way (a map with duplicate or unhashable keys).
func anyEqual(x any, want typed.Value) (eq, ok bool) {
	switch want.Kind {
	case typed.Nil:
		return x == nil, true
	case typed.Bool:
		b, isBool := x.(bool)
		return isBool && b == want.Bool, true
	case typed.Int, typed.Number, typed.Float32, typed.Float64:
		got, isNum := numberValue(x)
		return isNum && typed.Equal(got, want), true
	case typed.Str:
		s, isStr := x.(string)
		return isStr && s == string(want.Bytes), true
	case typed.Bin:
		b, isBin := x.([]byte)
		return isBin && bytes.Equal(b, want.Bytes), true
	case typed.Ext:
		e, isExt := x.(mpk.Ext)
		return isExt && e.Type == want.Ext && bytes.Equal(e.Data, want.Bytes), true
	case typed.Timestamp:
		switch tm := x.(type) {
		case time.Time:
			return tm.Unix() == want.Sec && int64(tm.Nanosecond()) == want.Nsec && tm.Location() == time.UTC, true
		case mpk.Timestamp:
			return tm.Sec == want.Sec && int64(tm.Nsec) == want.Nsec, true
		}
		return false, true
	case typed.Array:
		a, isArr := x.([]any)
		if !isArr || len(a) != len(want.Items) {
			return false, true
		}
		for i := range a {
			if eq, ok := anyEqual(a[i], want.Items[i]); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	case typed.Map:
		return mapEqual(x, want)
	}
	return false, true
}

func numberValue(x any) (typed.Value, bool) {
	switch n := x.(type) {
	case int64:
		return typed.IntValue(n < 0, n, uint64(n)), true
	case uint64:
		if n <= math.MaxInt64 {
			return typed.Value{}, false // ints that fit an int64 must decode as int64
		}
		return typed.IntValue(false, 0, n), true
	case float32:
		return typed.Value{Kind: typed.Float32, F: float64(n)}, true
	case float64:
		return typed.Value{Kind: typed.Float64, F: n}, true
	}
	return typed.Value{}, false
}

func mapEqual(x any, want typed.Value) (eq, ok bool) {
	pairs := len(want.Items) / 2
	allStr := true
	for i := 0; i < len(want.Items); i += 2 {
		if want.Items[i].Kind != typed.Str {
			allStr = false
		}
	}
	if allStr {
		m, isMap := x.(map[string]any)
		if !isMap {
			return false, true
		}
		seen := map[string]bool{}
		for i := 0; i < len(want.Items); i += 2 {
			k := string(want.Items[i].Bytes)
			if seen[k] {
				return false, false // duplicate keys: the last one wins in a Go map
			}
			seen[k] = true
		}
		for i := 0; i < len(want.Items); i += 2 {
			v, found := m[string(want.Items[i].Bytes)]
			if !found {
				return false, true
			}
			if eq, ok := anyEqual(v, want.Items[i+1]); !eq || !ok {
				return eq, ok
			}
		}
		return len(m) == pairs, true
	}
	m, isMap := x.(map[any]any)
	if !isMap {
		return false, true
	}
	if len(m) != pairs {
		return false, false
	}
	for k, v := range m {
		found := false
		for i := 0; i < len(want.Items); i += 2 {
			if keq, kok := anyEqual(k, want.Items[i]); kok && keq {
				if eq, ok := anyEqual(v, want.Items[i+1]); !eq || !ok {
					return eq, ok
				}
				found = true
				break
			}
		}
		if !found {
			return false, false
		}
	}
	return true, true
}

// sortedMaps reports whether every map in v has str keys in strictly increasing order, the order
// Marshal writes, and no float 32 (which decodes to float32 and encodes back the same) is missing.
func sortedMaps(v typed.Value) bool {
	switch v.Kind {
	case typed.Array:
		for _, item := range v.Items {
			if !sortedMaps(item) {
				return false
			}
		}
	case typed.Map:
		var keys []string
		for i := 0; i < len(v.Items); i += 2 {
			if v.Items[i].Kind != typed.Str || !sortedMaps(v.Items[i+1]) {
				return false
			}
			keys = append(keys, string(v.Items[i].Bytes))
		}
		if !sort.StringsAreSorted(keys) {
			return false
		}
		for i := 1; i < len(keys); i++ {
			if keys[i] == keys[i-1] {
				return false
			}
		}
	}
	return true
}

// hasUnhashableKey reports whether some map in v has a key Go cannot hash once decoded.
func hasUnhashableKey(v typed.Value) bool {
	for i, item := range v.Items {
		if v.Kind == typed.Map && i%2 == 0 {
			switch item.Kind {
			case typed.Bin, typed.Array, typed.Map, typed.Ext:
				return true
			}
		}
		if hasUnhashableKey(item) {
			return true
		}
	}
	return false
}
