package genrt_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/genrt"
	"reflect"
	"strings"
	"testing"
)

// TestNestedReadsMatchWholeMessage checks the Nested helpers of generated code against Skip on
// the whole message: a value read at depth d must fail (or not) exactly as it does inside d
// enclosing arrays, with the offset counted from the value.
func TestNestedReadsMatchWholeMessage(t *testing.T) {
	values := map[string][]byte{
		"array":         {0x91, 0x90},
		"map":           {0x81, 0xa1, 'k', 0x80},
		"array 16 cut":  {0xdc, 0x00, 0x05, 0x01}, // depth is checked before the fit
		"map over 2n":   {0x82, 0x01, 0x02},       // truncated when within the depth
		"scalar":        {0xa1, 'x'},
		"invalid byte":  {0xc1},
		"deep arrays":   append(bytes.Repeat([]byte{0x91}, 40), 0xc0),
		"array of maps": {0x92, 0x80, 0x81, 0x01, 0x90},
	}
	readers := map[string]func(b []byte, depth int) ([]byte, error){
		"SkipNested": genrt.SkipNested,
		"ReadArrayHeaderNested": func(b []byte, depth int) ([]byte, error) {
			_, rest, err := genrt.ReadArrayHeaderNested(b, depth)
			return rest, err
		},
		"ReadMapHeaderNested": func(b []byte, depth int) ([]byte, error) {
			_, rest, err := genrt.ReadMapHeaderNested(b, depth)
			return rest, err
		},
		"UnmarshalPrefixNested": func(b []byte, depth int) ([]byte, error) {
			var v any
			return genrt.UnmarshalPrefixNested(b, &v, depth)
		},
	}
	for vname, value := range values {
		for _, depth := range []int{0, 1, 990, 1000, 1023, 1024} {
			// The same value inside depth one-element arrays: Skip gives the reference error.
			whole := append(bytes.Repeat([]byte{0x91}, depth), value...)
			_, wholeErr := mpk.Skip(whole)
			var want *mpk.DecodeError
			if errors.As(wholeErr, &want) {
				if want.Offset < int64(depth) {
					continue // the limit fell on an enclosing array: nothing to compare
				}
				want.Offset -= int64(depth)
			}
			for rname, read := range readers {
				t.Run(fmt.Sprintf("%s/%s/depth %d", rname, vname, depth), func(t *testing.T) {
					want := want
					if header := strings.HasPrefix(rname, "Read"); header && want != nil && want.Offset > 0 {
						want = nil // a header reader reads one token, and its errors are at 0
					}
					rest, err := read(value, depth)
					var got *mpk.DecodeError
					if errors.As(err, &got) != (want != nil) || (want != nil && *got != *want) {
						t.Fatalf("got %v, want %v", err, wholeErr)
					}
					if err == nil && rname == "SkipNested" && len(rest) != 0 {
						t.Fatalf("%d bytes left", len(rest))
					}
				})
			}
		}
	}
}

// TestReadsConvertLikeUnmarshal checks the Read functions generated code uses against Unmarshal
// into the same Go type: the same value, or an error on both sides (a *DecodeError the same).
// The Read functions are stricter in two documented places: nil is a type error (Unmarshal
// leaves the zero value), and a string is read only from a str (Unmarshal also takes a bin).
func TestReadsConvertLikeUnmarshal(t *testing.T) {
	inputs := map[string][]byte{
		"float64 0.1":     {0xcb, 0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a},
		"float64 0.5":     {0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0},
		"float64 NaN":     {0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1},
		"float64 1e300":   {0xcb, 0x7e, 0x37, 0xe4, 0x3c, 0x88, 0x00, 0x75, 0x9c},
		"float32 1.5":     {0xca, 0x3f, 0xc0, 0, 0},
		"int 3":           {0x03},
		"int -200":        {0xd1, 0xff, 0x38},
		"int 300":         {0xcd, 0x01, 0x2c},
		"uint 2^32":       {0xcf, 0, 0, 0, 1, 0, 0, 0, 0},
		"uint 2^64-1":     {0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"uint 2^63":       {0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0},
		"int -2^63":       {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0},
		"int 16 -2":       {0xd1, 0xff, 0xfe},
		"int 32 -2":       {0xd2, 0xff, 0xff, 0xff, 0xfe},
		"uint 16 cut":     {0xcd, 0x01},
		"uint 32 7":       {0xce, 0, 0, 0, 7},
		"int 64 cut":      {0xd3, 0, 0, 0, 0, 0, 0, 0},
		"fixstr":          {0xa3, 'a', 'b', 'c'},
		"empty str":       {0xa0},
		"str 8":           append([]byte{0xd9, 40}, bytes.Repeat([]byte{'x'}, 40)...),
		"str 16":          append([]byte{0xda, 0, 3}, 'x', 'y', 'z'),
		"fixstr cut":      {0xa3, 'a'},
		"str 8 cut":       {0xd9, 40, 'x'},
		"bin":             {0xc4, 1, 'x'},
		"nil":             {0xc0},
		"invalid byte":    {0xc1},
		"empty":           {},
		"bool":            {0xc3},
		"array of one":    {0x91, 0x01},
		"int 8 cut":       {0xd0},
		"float 32 cut":    {0xca, 0x3f},
		"float 64 cut":    {0xcb, 0x3f, 0xe0},
		"negative fixint": {0xff},
	}
	type reader struct {
		read   func(b []byte) (any, []byte, error)
		target func() any // a pointer to a fresh value of the type read
	}
	readers := map[string]reader{
		"ReadFloat32": {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadFloat32(b)) }, func() any { return new(float32) }},
		"ReadFloat64": {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadFloat64(b)) }, func() any { return new(float64) }},
		"ReadInt8":    {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadInt8(b)) }, func() any { return new(int8) }},
		"ReadInt16":   {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadInt16(b)) }, func() any { return new(int16) }},
		"ReadInt32":   {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadInt32(b)) }, func() any { return new(int32) }},
		"ReadInt":     {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadInt(b)) }, func() any { return new(int64) }},
		"ReadUint8":   {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadUint8(b)) }, func() any { return new(uint8) }},
		"ReadUint16":  {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadUint16(b)) }, func() any { return new(uint16) }},
		"ReadUint32":  {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadUint32(b)) }, func() any { return new(uint32) }},
		"ReadUint":    {func(b []byte) (any, []byte, error) { return wrap(mpk.ReadUint(b)) }, func() any { return new(uint64) }},
		"StringArena.ReadString": {func(b []byte) (any, []byte, error) {
			var sa genrt.StringArena
			return wrap(sa.ReadString(b))
		}, func() any { return new(string) }},
	}
	for iname, in := range inputs {
		for rname, r := range readers {
			got, rest, err := r.read(in)
			target := r.target()
			refErr := mpk.Unmarshal(in, target)
			want := reflectValue(target)
			var de, refDe *mpk.DecodeError
			var te *mpk.UnmarshalTypeError
			isDe, refIsDe := errors.As(err, &de), errors.As(refErr, &refDe)
			stricter := iname == "nil" || (iname == "bin" && rname == "StringArena.ReadString")
			switch {
			case stricter:
				if !errors.As(err, &te) || refErr != nil {
					t.Errorf("%s on %s: %v, want a type error; mpk.Unmarshal: %v", rname, iname, err, refErr)
				}
			case errors.As(err, &te) && te.Type != reflect.TypeOf(target).Elem():
				t.Errorf("%s on %s: the error names %v", rname, iname, te.Type)
			case isDe != refIsDe || (isDe && *de != *refDe):
				t.Errorf("%s on %s: %v; mpk.Unmarshal: %v", rname, iname, err, refErr)
			case (err == nil) != (refErr == nil):
				t.Errorf("%s on %s: %v; mpk.Unmarshal: %v", rname, iname, err, refErr)
			case err == nil && (fmt.Sprint(got) != fmt.Sprint(want) || len(rest) != 0):
				t.Errorf("%s on %s: %v (%d bytes left); mpk.Unmarshal: %v", rname, iname, got, len(rest), want)
			case err != nil && !bytes.Equal(rest, in):
				t.Errorf("%s on %s: the rest after an error is not the input", rname, iname)
			}
		}
	}
}

func wrap[T any](v T, rest []byte, err error) (any, []byte, error) { return v, rest, err }

func reflectValue(p any) any {
	switch p := p.(type) {
	case *float32:
		return *p
	case *float64:
		return *p
	case *int8:
		return *p
	case *int16:
		return *p
	case *int32:
		return *p
	case *int64:
		return *p
	case *uint8:
		return *p
	case *uint16:
		return *p
	case *uint32:
		return *p
	case *uint64:
		return *p
	case *string:
		return *p
	}
	panic("unexpected target")
}

// TestStringArena reads strings of every head size through one arena: each equals its bytes,
// none shares memory with the input (overwriting the input changes none), and a slice of
// another buffer is not mistaken for the copied input.
func TestStringArena(t *testing.T) {
	var in []byte
	var want []string
	for i, n := range []int{3, 0, 31, 32, 255, 256, 5000, 1, 70000, 4, 4090, 9} {
		s := strings.Repeat(string(rune('a'+i%26)), n)
		want = append(want, s)
		in = mpk.AppendString(in, s)
	}
	var sa genrt.StringArena
	var got []string
	rest := in
	for range want {
		var s string
		var err error
		if s, rest, err = sa.ReadString(rest); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left", len(rest))
	}
	for i := range in {
		in[i] = 0xff
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("string %d: got %d bytes %.10q..., want %d bytes %.10q...", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}

	one := []byte{0xa3, 'a', 'a', 'a', 0xa3, 'b', 'b', 'b'}
	other := []byte{0xa3, 'c', 'c', 'c', 0xa3, 'd', 'd', 'd'}
	var sb genrt.StringArena
	s1, rest1, _ := sb.ReadString(one)
	s2, _, _ := sb.ReadString(other[4:])
	s3, _, _ := sb.ReadString(rest1)
	if s1 != "aaa" || s2 != "ddd" || s3 != "bbb" {
		t.Fatalf("got %q %q %q, want aaa ddd bbb", s1, s2, s3)
	}
}

// TestSizesMatchAppends checks each Size function against the length of what the matching
// Append function writes, at every width's edges and at every power of two around them.
func TestSizesMatchAppends(t *testing.T) {
	var ints []int64
	for shift := 0; shift < 64; shift++ {
		p := int64(1) << shift
		ints = append(ints, p-1, p, p+1, -p-1, -p, -p+1)
	}
	ints = append(ints, 0, -32, -33, 127, 128, -128, -129, 255, 256, 65535, 65536, -32768, -32769,
		4294967295, 4294967296, -2147483648, -2147483649, math.MaxInt64, math.MinInt64)
	for _, v := range ints {
		if got, want := genrt.IntSize(v), len(mpk.AppendInt(nil, v)); got != want {
			t.Errorf("IntSize(%d) = %d, mpk.AppendInt writes %d bytes", v, got, want)
		}
		if got, want := genrt.UintSize(uint64(v)), len(mpk.AppendUint(nil, uint64(v))); got != want {
			t.Errorf("UintSize(%d) = %d, mpk.AppendUint writes %d bytes", uint64(v), got, want)
		}
	}
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 65535, 65536, 65537, 1 << 20} {
		if got, want := genrt.StringSize(n), len(mpk.AppendStringHeader(nil, n))+n; got != want {
			t.Errorf("StringSize(%d) = %d, want %d", n, got, want)
		}
		if got, want := genrt.BytesSize(n), len(mpk.AppendBytesHeader(nil, n))+n; got != want {
			t.Errorf("BytesSize(%d) = %d, want %d", n, got, want)
		}
		if got, want := genrt.HeaderSize(n), len(mpk.AppendArrayHeader(nil, uint32(n))); got != want {
			t.Errorf("HeaderSize(%d) = %d, mpk.AppendArrayHeader writes %d bytes", n, got, want)
		}
		if got, want := genrt.HeaderSize(n), len(mpk.AppendMapHeader(nil, uint32(n))); got != want {
			t.Errorf("HeaderSize(%d) = %d, mpk.AppendMapHeader writes %d bytes", n, got, want)
		}
	}
}
