package mpk

import (
	"bytes"
	"errors"
	"testing"
)

// TestMaxAlloc decodes values that allocate far more than their encoding: over the budget they
// fail with LengthLimit at the head of the value that went over, under it they decode.
func TestMaxAlloc(t *testing.T) {
	nils := append([]byte{0xdc, 0x27, 0x10}, bytes.Repeat([]byte{0xc0}, 10000)...) // array 16 of 10000 nils
	type big struct{ A, B, C, D [64]int64 }
	bigs := append([]byte{0xdc, 0x00, 0x64}, bytes.Repeat([]byte{0x80}, 100)...) // 100 empty maps
	longStr := append([]byte{0x91, 0xda, 0x10, 0x00}, bytes.Repeat([]byte{'x'}, 4096)...)
	cases := []struct {
		name   string
		data   []byte
		into   func() any
		offset int64
	}{
		{"[]any of nils", nils, func() any { return new(any) }, 0},
		{"[]big of empty maps", bigs, func() any { return new([]big) }, 0},
		{"a str inside an array", longStr, func() any { return new([]string) }, 1},
	}
	for _, c := range cases {
		err := DecodeOptions{MaxAlloc: 1000}.Unmarshal(c.data, c.into())
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != LengthLimit || de.Offset != c.offset {
			t.Errorf("%s: got %v, want length_limit at %d", c.name, err, c.offset)
		}
		if err := (DecodeOptions{MaxAlloc: 1 << 30}).Unmarshal(c.data, c.into()); err != nil {
			t.Errorf("%s under a large budget: %v", c.name, err)
		}
	}
}
