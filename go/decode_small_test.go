package mpk

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
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

// boxesIn counts the values of a decoded tree that take a box on the small path: non-empty
// strings that are not map keys, int64s outside smallInts, uint64s, float64s.
func boxesIn(v any) int {
	switch x := v.(type) {
	case string:
		if x != "" {
			return 1
		}
	case int64:
		if x < smallIntMin || x >= smallIntMin+int64(len(smallInts)) {
			return 1
		}
	case uint64, float64:
		return 1
	case []any:
		n := 0
		for _, e := range x {
			n += boxesIn(e)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range x {
			n += boxesIn(e)
		}
		return n
	}
	return 0
}

// emptyStrings counts the empty strings of a decoded tree, map keys included.
func emptyStrings(v any) int {
	n := 0
	switch x := v.(type) {
	case string:
		if x == "" {
			n++
		}
	case []any:
		for _, e := range x {
			n += emptyStrings(e)
		}
	case map[string]any:
		for k, e := range x {
			n += emptyStrings(k) + emptyStrings(e)
		}
	}
	return n
}

// TestCountBoxes: the one chunk of boxes the small path makes has a slot for every number and
// string that needs one, and no more but one per empty string (for the shortest encodings
// Marshal writes; a small int in a wider head may leave a slot unused too), so that the chunk is
// sized by the message.
func TestCountBoxes(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	exact := 0
	for _, m := range smallMessages(r, 3000) {
		v, ok := decodeSmallAny(m)
		if !ok {
			continue
		}
		want, got := boxesIn(v), countBoxes(m)
		if b, err := Marshal(v); err == nil && bytes.Equal(b, m) { // a message as Marshal writes it
			exact++
			if got < want || got > want+emptyStrings(v) {
				t.Fatalf("% x: counted %d boxes, the value has %d", m, got, want)
			}
		} else if got < want {
			t.Fatalf("% x: counted %d boxes, the value has %d", m, got, want)
		}
	}
	// keys are not boxed, values are; a key equal to a value (no dedup) still counts once
	for _, c := range []struct {
		m    []byte
		want int
	}{
		{[]byte{0x82, 0xa1, 'a', 0xa1, 'b', 0xa1, 'c', 0xcd, 0x01, 0x00}, 2},
		{[]byte{0x92, 0x81, 0xa1, 'k', 0x91, 0xa1, 'v', 0xa1, 'w'}, 2}, // the map closes inside the array
		{[]byte{0x93, 0x80, 0x90, 0xa1, 'x'}, 1},
		{[]byte{0xde, 0x00, 0x01, 0xd9, 0x01, 'k', 0xd9, 0x01, 'v'}, 1},
		{[]byte{0x81, 0xa0, 0xa1, 'v'}, 1}, // an empty key
		{[]byte{0x81, 0xa1, 'k', 0xa0}, 1}, // an empty value: one box over
		{[]byte{0x93, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xd1, 0x01, 0x00, 0xcc, 0xff}, 2},
	} {
		if got := countBoxes(c.m); got != c.want {
			t.Errorf("% x: %d boxes, want %d", c.m, got, c.want)
		}
	}
	if exact < 100 {
		t.Errorf("only %d messages checked exactly", exact)
	}
}

// TestSmallAnyBoxBytes: a small message allocates about what its value holds. The seed's
// Product as a map (192 bytes: 5 strings and 2 ints that need boxes) took 2,304 bytes in 7
// allocations when the box chunks were sized from the bytes left (64 slots each for numbers and
// strings); it takes its map (336), one copy of its strings (192), the colors array (96), one
// chunk of 8 boxes of 16 bytes for its 7 and the interface the result is stored in (16): 768
// bytes in 6 allocations.
func TestSmallAnyBoxBytes(t *testing.T) {
	product := map[string]any{
		"id": int64(191919191919), "name": "Men's Trail Running Shoe", "price": int64(18900),
		"description": "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.",
		"colors":      []any{"Black", "Forest Green", "Slate Blue"},
	}
	data, err := Marshal(product)
	if err != nil || len(data) != 192 {
		t.Fatalf("%d bytes, %v", len(data), err)
	}
	var v any
	run := func() {
		v = nil
		if err := Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, run)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 200
	for i := 0; i < runs; i++ {
		run()
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	if !sameGo(v, product) {
		t.Fatalf("decoded %#v", v)
	}
	if allocs > 6 || perRun > 800 {
		t.Errorf("%v allocations, %d bytes a decode; want at most 6 and 800", allocs, perRun)
	}
}

// TestSmallAnyBoxBytesMany: a small message with more boxes than the first chunk holds gets a
// second chunk of what its rest needs. 16 rows of ["hello", 456, true] (163 bytes, 32 boxes)
// took 3,680 bytes with chunks sized from the bytes left; it takes its arrays (288 and 16 x 96),
// one copy of its strings (176), 8 + 24 boxes of 16 bytes and the result's interface: 2,528.
func TestSmallAnyBoxBytesMany(t *testing.T) {
	var rows []any
	for i := 0; i < 16; i++ {
		rows = append(rows, []any{"hello", int64(456), true})
	}
	data, err := Marshal(rows)
	if err != nil || len(data) > smallAnyMax {
		t.Fatalf("%d bytes, %v", len(data), err)
	}
	var v any
	run := func() {
		v = nil
		if err := Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
	}
	run()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 200
	for i := 0; i < runs; i++ {
		run()
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	if !sameGo(v, rows) {
		t.Fatalf("decoded %#v", v)
	}
	if perRun > 2700 {
		t.Errorf("%d bytes a decode; want at most 2700", perRun)
	}
}
