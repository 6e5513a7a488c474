package mpk

import (
	"bytes"
	"errors"
	"fmt"
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
		"SkipNested": SkipNested,
		"ReadArrayHeaderNested": func(b []byte, depth int) ([]byte, error) {
			_, rest, err := ReadArrayHeaderNested(b, depth)
			return rest, err
		},
		"ReadMapHeaderNested": func(b []byte, depth int) ([]byte, error) {
			_, rest, err := ReadMapHeaderNested(b, depth)
			return rest, err
		},
		"UnmarshalPrefixNested": func(b []byte, depth int) ([]byte, error) {
			var v any
			return UnmarshalPrefixNested(b, &v, depth)
		},
	}
	for vname, value := range values {
		for _, depth := range []int{0, 1, 990, 1000, 1023, 1024} {
			// The same value inside depth one-element arrays: Skip gives the reference error.
			whole := append(bytes.Repeat([]byte{0x91}, depth), value...)
			_, wholeErr := Skip(whole)
			var want *DecodeError
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
					var got *DecodeError
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
