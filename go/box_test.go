package mpk

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// boxDoc is a document of the leaves that are boxed in chunks (ints outside 0..255, uint64
// above MaxInt64, float64, strings) with others between them, and the same tree built in Go.
func boxDoc(n int) ([]byte, any) {
	a := make([]any, 0, n)
	for i := 0; i < n; i++ {
		switch i % 7 {
		case 0:
			a = append(a, int64(i*1000+300))
		case 1:
			a = append(a, -int64(i)-1)
		case 2:
			a = append(a, float64(i)/3)
		case 3:
			a = append(a, fmt.Sprint("s", i))
		case 4:
			a = append(a, uint64(math.MaxUint64-uint64(i)))
		case 5:
			a = append(a, map[string]any{"k": fmt.Sprint(i), "n": int64(i % 256), "f": -float64(i)})
		default:
			a = append(a, []any{nil, true, int64(math.MinInt64 + i), ""})
		}
	}
	b, err := Marshal(a)
	if err != nil {
		panic(err)
	}
	return b, a
}

// TestBoxedLeaves: numbers and strings decoded into `any` with their boxes in shared chunks have
// the values and types Go's own boxing gives, on the general path and in struct fields of type
// any, and keep them while later decodes run (slots are never handed out twice).
func TestBoxedLeaves(t *testing.T) {
	data, want := boxDoc(700)
	var got any
	if err := Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded tree differs")
	}
	var holder struct{ V any }
	wrapped, _ := Marshal(map[string]any{"V": want})
	if err := Unmarshal(wrapped, &holder); err != nil || !reflect.DeepEqual(holder.V, want) {
		t.Fatalf("struct field: %v", err)
	}
	other, _ := boxDoc(900)
	for i := 0; i < 20; i++ {
		var x any
		if err := Unmarshal(other, &x); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("a decoded tree changed during later decodes")
	}
	// the fallback
	for _, c := range []struct {
		typ  any
		bits uint64
		want any
	}{{int64(0), 1 << 40, int64(1 << 40)}, {uint64(0), math.MaxUint64, uint64(math.MaxUint64)}, {0.0, math.Float64bits(-2.5), -2.5}} {
		if got := boxLeaf(typeOfAny(c.typ), c.bits); got != c.want {
			t.Fatalf("boxLeaf: %#v, want %#v", got, c.want)
		}
	}
}

// TestBoxedLeavesAllocations: 1000 ints above 255 decode into `any` with a handful of
// allocations (the []any and the chunks), not one per int.
func TestBoxedLeavesAllocations(t *testing.T) {
	a := make([]any, 1000)
	for i := range a {
		a[i] = int64(i*1000 + 256)
	}
	data, _ := Marshal(a)
	allocs := testing.AllocsPerRun(20, func() {
		var x any
		if err := Unmarshal(data, &x); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Fatalf("%v allocations for 1000 ints", allocs)
	}
}

// TestBoxChunksBounded: a chunk is never longer than the values the input left can hold, so a
// short message with one big int and one string allocates small chunks, and the chunks are
// charged to MaxAlloc (a budget too small for them is a LengthLimit error, not a silent excess).
func TestBoxChunksBounded(t *testing.T) {
	d := getDecodeState([]byte{0xcd, 0x01, 0x00}, &defaultLimits, false, 0)
	defer putDecodeState(d)
	d.off = 3
	if x := d.boxInt(256); x != int64(256) || len(d.nums) != 1 {
		t.Fatalf("%v in a chunk of %d", x, len(d.nums))
	}
	big := make([]any, 100)
	for i := range big {
		big[i] = float64(i) + 0.5
	}
	data, _ := Marshal(big)
	var x any
	err := DecodeOptions{MaxAlloc: int64(16*100 + 64)}.Unmarshal(data, &x)
	if de, ok := err.(*DecodeError); !ok || de.Kind != LengthLimit {
		t.Fatalf("want a LengthLimit error, got %v", err)
	}
}

// TestNewAnyArray: the `any` newAnyArray returns holds the very slice it returns (len and cap n,
// elements nil), on both sides of the arrayBox sizes, and what is stored through the slice
// survives garbage collections when only the `any` is kept.
func TestNewAnyArray(t *testing.T) {
	var keep []any
	for n := 0; n <= 40; n++ {
		x, a := newAnyArray(n)
		got, ok := x.([]any)
		if !ok || len(got) != n || cap(got) != n || len(a) != n {
			t.Fatalf("n=%d: %T len %d cap %d", n, x, len(got), cap(got))
		}
		for i := range a {
			if a[i] != nil {
				t.Fatalf("n=%d: element %d is %v", n, i, a[i])
			}
			a[i] = fmt.Sprint(n, ":", i)
		}
		keep = append(keep, x)
	}
	runtime.GC()
	runtime.GC()
	for n, x := range keep {
		for i, v := range x.([]any) {
			if v != fmt.Sprint(n, ":", i) {
				t.Fatalf("n=%d: element %d became %v", n, i, v)
			}
		}
	}
	// what the budget is charged covers what is allocated
	for n := 1; n <= 40; n++ {
		x, _ := newAnyArray(n)
		var size uintptr
		if n <= 16 {
			size = reflect.TypeOf(arrayBox[[16]any]{}).Size() // the largest box
			switch {
			case n <= 2:
				size = reflect.TypeOf(arrayBox[[2]any]{}).Size()
			case n <= 4:
				size = reflect.TypeOf(arrayBox[[4]any]{}).Size()
			case n <= 8:
				size = reflect.TypeOf(arrayBox[[8]any]{}).Size()
			}
		} else {
			size = uintptr(16 * cap(x.([]any)))
		}
		if anyArrayBytes(uint64(n)) < uint64(size) {
			t.Fatalf("n=%d: charged %d for %d bytes", n, anyArrayBytes(uint64(n)), size)
		}
	}
	if allocs := testing.AllocsPerRun(50, func() { newAnyArray(3) }); allocs != 1 {
		t.Fatalf("newAnyArray(3): %v allocations", allocs)
	}
}

// TestFlatArrayDecode: decodeFlatArray gives what the general decoder gives for fixarrays of
// one-byte values, with one allocation, and declines everything else (a wider value, bytes
// after the array or missing, another head).
func TestFlatArrayDecode(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	one := []byte{0x00, 0x01, 0x7f, 0xe0, 0xff, 0xc0, 0xc2, 0xc3}
	for i := 0; i < 1000; i++ {
		n := r.Intn(16)
		data := []byte{0x90 | byte(n)}
		for j := 0; j < n; j++ {
			data = append(data, one[r.Intn(len(one))])
		}
		got, ok := decodeFlatArray(data)
		var want any
		if err := (DecodeOptions{}).Unmarshal(data, &want); err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%x: %#v %v, general %#v %v", data, got, ok, want, err)
		}
	}
	for _, h := range []string{"", "c0", "9201", "920102ff", "9201cc80", "92a0c0", "dc000101"} {
		b, _ := hex.DecodeString(h)
		if _, ok := decodeFlatArray(b); ok {
			t.Fatalf("%s taken", h)
		}
	}
	data := []byte{0x92, 0xff, 0xfe}
	if n := testing.AllocsPerRun(50, func() { decodeFlatArray(data) }); n != 1 {
		t.Fatalf("[-1,-2]: %v allocations", n)
	}
	// every small int has the static box of its value
	for v := int64(smallIntMin); v < smallIntMin+int64(len(smallInts)); v++ {
		if x := smallInt(v); x != v {
			t.Fatalf("smallInt(%d) = %v", v, x)
		}
	}
}

// TestKeyCache: map keys decoded through the key cache are the right strings, whether their slot
// holds them, another key (keys that share their first and last 8 bytes, or their length and
// ends), or nothing, and a cached key is given back without a new allocation.
func TestKeyCache(t *testing.T) {
	keys := []string{"", "a", "b", "ab", "ba", "abc", "abcd", "abdc", "dcba", "profile_x_color", "profile_y_color",
		"205705993", "205705994", "305705993", "abcdefghXabcdefgh", "abcdefghYabcdefgh", strings.Repeat("k", 32)}
	for i := 0; i < 2000; i++ {
		keys = append(keys, fmt.Sprint(100000000+i*7919))
	}
	d := getDecodeState(nil, &defaultLimits, false, 0)
	defer putDecodeState(d)
	for round := 0; round < 3; round++ {
		for _, k := range keys {
			if got := d.key([]byte(k)); got != k {
				t.Fatalf("key %q came back as %q", k, got)
			}
		}
	}
	b := []byte("205705993")
	d.key(b)
	if n := testing.AllocsPerRun(20, func() { d.key(b) }); n != 0 {
		t.Fatalf("a cached key: %v allocations", n)
	}
}
