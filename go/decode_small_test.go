package mpk

import (
	"fmt"
	"math/rand"
	"testing"
)

// sameGo compares two decoded values by their Go syntax (types included; fmt sorts map keys,
// and NaN equals NaN there, unlike reflect.DeepEqual).
func sameGo(a, b any) bool { return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) }

// smallMessages are encodings of small random trees, with cut, flipped and extended copies.
func smallMessages(r *rand.Rand, n int) [][]byte {
	var out [][]byte
	for len(out) < n {
		tree := randomAnyTree(r, 2)
		b, err := Marshal(tree)
		if err != nil || len(b) > smallAnyMax {
			continue
		}
		out = append(out, b)
		if len(b) > 1 {
			out = append(out, b[:r.Intn(len(b))])
			c := append([]byte(nil), b...)
			c[r.Intn(len(c))] ^= byte(1 << r.Intn(8))
			out = append(out, c, append(append([]byte(nil), b...), 0xc0))
		}
	}
	return out
}

// TestSmallAnyMatchesGeneral: the small-message path of Unmarshal into an `any` gives the value
// the general decoder gives whenever it takes a message, and Unmarshal's result (value or error)
// is the general decoder's for every message, taken or not.
func TestSmallAnyMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	msgs := smallMessages(r, 3000)
	msgs = append(msgs,
		[]byte{0x92, 0x01, 0x02}, []byte{0x92, 0xff, 0xfe}, []byte{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02},
		[]byte{0xdc, 0x00, 0x03, 0x91, 0x91}, []byte{0x91, 0x91, 0x91, 0x91, 0x91}, []byte{0x81, 0x01, 0x02},
		[]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []byte{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0},
		[]byte{0xc4, 0x00}, []byte{0xa0}, []byte{0xca, 0x3f, 0x80, 0, 0}, []byte{0xd6, 0xff, 0, 0, 0, 1})
	taken := 0
	for _, m := range msgs {
		var general any
		gerr := DecodeOptions{}.Unmarshal(m, &general)
		small, ok := decodeSmallAny(m)
		if ok {
			taken++
			if gerr != nil || !sameGo(small, general) {
				t.Fatalf("% x: small path %#v, general %#v (%v)", m, small, general, gerr)
			}
		}
		var got any
		err := Unmarshal(m, &got)
		if (err == nil) != (gerr == nil) || (err != nil && err.Error() != gerr.Error()) || !sameGo(got, general) {
			t.Fatalf("% x: Unmarshal %#v %v, general %#v %v", m, got, err, general, gerr)
		}
	}
	if taken < len(msgs)/4 {
		t.Errorf("the small path took %d of %d messages", taken, len(msgs))
	}
}

// TestSmallAnyBounds: declared counts are checked against the bytes left, with what the open
// containers owe, before anything is made; too deep a message goes to the general decoder.
func TestSmallAnyBounds(t *testing.T) {
	for _, m := range [][]byte{
		{0x9f},                         // 15 elements, no bytes
		{0x92, 0x9f, 0x01, 0x01, 0x01}, // the inner array's 15 do not fit with the outer's 1 owed
		{0x81, 0xa1, 'a', 0x8f},        // a map of 15 pairs in no bytes
		{0xdc, 0xff, 0xff, 0x01},       // array16 of 65535
	} {
		if _, ok := decodeSmallAny(m); ok {
			t.Errorf("% x: taken", m)
		}
	}
	deep := make([]byte, 0, 40)
	for i := 0; i < 20; i++ {
		deep = append(deep, 0x91)
	}
	deep = append(deep, 0x01)
	if _, ok := decodeSmallAny(deep); ok {
		t.Error("20 levels taken")
	}
	var v any
	if err := Unmarshal(deep, &v); err != nil {
		t.Errorf("20 levels: %v", err)
	}
}

// TestSmallAnyAllocations: [1,2] costs its []any and the interface around it, nothing else.
func TestSmallAnyAllocations(t *testing.T) {
	data := []byte{0x92, 0x01, 0x02}
	var v any
	n := testing.AllocsPerRun(100, func() {
		v = nil
		if err := Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Errorf("%v allocations", n)
	}
}
