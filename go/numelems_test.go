package mpk

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

// withNumElemsPath runs f with decodeNumElems' loop and with its fallback (decodeAny an element).
func withNumElemsPath(t *testing.T, f func(t *testing.T)) {
	defer func(v bool) { numElemsLoop = v }(numElemsLoop)
	for _, loop := range []bool{true, false} {
		numElemsLoop = loop
		name := "loop"
		if !loop {
			name = "fallback"
		}
		t.Run(name, f)
	}
}

// numElem is one array element written in a chosen encoding, with the value Unmarshal into `any`
// must give for it.
type numElem struct {
	enc  []byte
	want any
}

func beN(head byte, v uint64, w int) []byte {
	b := make([]byte, 9)
	binary.BigEndian.PutUint64(b[1:], v)
	b[0] = head
	return append([]byte{head}, b[9-w:]...)
}

// numElems is every number encoding, at the edges of smallInts (the static boxes) and of each
// width, non-canonical widths included, and a few values decodeNumElems hands to decodeAny.
func numElems() []numElem {
	var es []numElem
	for _, v := range []int64{0, 1, 127} {
		es = append(es, numElem{[]byte{byte(v)}, v})
	}
	for _, v := range []int64{-1, -32} {
		es = append(es, numElem{[]byte{byte(int8(v))}, v})
	}
	for _, v := range []uint64{0, 5, 127, 128, 255} {
		es = append(es, numElem{beN(mUint8, v, 1), int64(v)})
	}
	for _, v := range []uint64{0, 255, 256, 65535} {
		es = append(es, numElem{beN(mUint16, v, 2), int64(v)})
	}
	for _, v := range []uint64{7, 65536, math.MaxUint32} {
		es = append(es, numElem{beN(mUint32, v, 4), int64(v)})
	}
	for _, v := range []uint64{9, 1 << 40, math.MaxInt64} {
		es = append(es, numElem{beN(mUint64, v, 8), int64(v)})
	}
	es = append(es, numElem{beN(mUint64, math.MaxUint64, 8), uint64(math.MaxUint64)},
		numElem{beN(mUint64, 1<<63, 8), uint64(1 << 63)})
	for _, v := range []int64{-128, -127, -1, 0, 127} {
		es = append(es, numElem{beN(mInt8, uint64(v), 1), v})
	}
	for _, v := range []int64{-32768, -129, -128, 255, 256, 32767} {
		es = append(es, numElem{beN(mInt16, uint64(v), 2), v})
	}
	for _, v := range []int64{math.MinInt32, -32769, 3, math.MaxInt32} {
		es = append(es, numElem{beN(mInt32, uint64(v), 4), v})
	}
	for _, v := range []int64{math.MinInt64, -1 << 40, -129, 200, math.MaxInt64} {
		es = append(es, numElem{beN(mInt64, uint64(v), 8), v})
	}
	for _, f := range []float64{0, -0.5, 1e300, math.Inf(-1)} {
		es = append(es, numElem{beN(mFloat64, math.Float64bits(f), 8), f})
	}
	// not numbers the loop reads: decodeAny's
	es = append(es,
		numElem{[]byte{0xca, 0x3f, 0xc0, 0, 0}, float32(1.5)},
		numElem{[]byte{mNil}, nil},
		numElem{[]byte{mTrue}, true},
		numElem{[]byte{0xa2, 'h', 'i'}, "hi"},
		numElem{[]byte{0x92, 0x01, 0xcd, 0x12, 0x34}, []any{int64(1), int64(0x1234)}},
		numElem{[]byte{0x81, 0xa1, 'k', 0xd1, 0xff, 0x00}, map[string]any{"k": int64(-256)}},
	)
	return es
}

func arrayOf(es []numElem) ([]byte, []any) {
	enc := []byte{mArray32, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(enc[1:], uint32(len(es)))
	want := make([]any, len(es))
	for i, e := range es {
		enc = append(enc, e.enc...)
		want[i] = e.want
	}
	return enc, want
}

func sameAny(a, b any) bool {
	fa, ok1 := a.(float64)
	fb, ok2 := b.(float64)
	if ok1 && ok2 {
		return math.Float64bits(fa) == math.Float64bits(fb)
	}
	return reflect.DeepEqual(a, b)
}

// TestNumElemsPaths checks decodeNumElems (arrays that start with a number) against the values
// and errors the plain decode gives, on both paths: every number encoding, each one first (so
// that the loop is taken) and followed by every other; arrays long enough to cross the box
// chunks (256 slots); the last elements of the input, which the loop leaves to decodeAny; an
// allocation budget that runs out in a chunk; and cut inputs.
func TestNumElemsPaths(t *testing.T) {
	withNumElemsPath(t, func(t *testing.T) {
		es := numElems()
		for i := range es {
			rot := append(append([]numElem(nil), es[i:]...), es[:i]...)
			enc, want := arrayOf(rot)
			var got any
			if err := Unmarshal(enc, &got); err != nil {
				t.Fatalf("rotation %d: %v", i, err)
			}
			a, ok := got.([]any)
			if !ok || len(a) != len(want) {
				t.Fatalf("rotation %d: got %T", i, got)
			}
			for j := range want {
				if !sameAny(a[j], want[j]) {
					t.Fatalf("rotation %d element %d: got %T %v, want %T %v", i, j, a[j], a[j], want[j], want[j])
				}
			}
		}
		// 3000 boxed numbers of each kind, interleaved: several chunks
		var long []numElem
		for i := 0; i < 3000; i++ {
			long = append(long,
				numElem{beN(mUint16, uint64(1000+i), 2), int64(1000 + i)},
				numElem{beN(mInt32, uint64(-100000-int64(i)), 4), -100000 - int64(i)},
				numElem{beN(mFloat64, math.Float64bits(float64(i)+0.25), 8), float64(i) + 0.25})
		}
		enc, want := arrayOf(long)
		var got any
		if err := Unmarshal(enc, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, any(want)) {
			t.Fatal("3000 x 3 numbers: values differ")
		}
		// a budget that runs out while boxing: the same error on both paths
		for _, budget := range []int64{200, 2000, 20000} {
			var x any
			err := DecodeOptions{MaxAlloc: budget}.Unmarshal(enc, &x)
			var de *DecodeError
			if !errors.As(err, &de) || de.Kind != LengthLimit {
				t.Fatalf("MaxAlloc %d: got %v, want a length_limit error", budget, err)
			}
		}
		// every cut of a short array of wide numbers: Truncated (or what the plain decode says)
		short, _ := arrayOf(es[10:20])
		for n := 0; n < len(short); n++ {
			var x any
			err := Unmarshal(short[:n], &x)
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("cut at %d: got %v", n, err)
			}
		}
	})
}

// TestNumElemsPathsAgree decodes the same inputs on both paths and compares values and errors,
// the cut inputs and the budgets above included.
func TestNumElemsPathsAgree(t *testing.T) {
	defer func(v bool) { numElemsLoop = v }(numElemsLoop)
	es := numElems()
	enc, _ := arrayOf(append(es, es...))
	run := func(loop bool, in []byte, budget int64) (any, string) {
		numElemsLoop = loop
		var x any
		err := DecodeOptions{MaxAlloc: budget}.Unmarshal(in, &x)
		if err != nil {
			return x, err.Error()
		}
		return x, ""
	}
	for n := 0; n <= len(enc); n++ {
		for _, budget := range []int64{0, 300, 1000} {
			x1, e1 := run(true, enc[:n], budget)
			x2, e2 := run(false, enc[:n], budget)
			if e1 != e2 || (e1 == "" && !reflect.DeepEqual(x1, x2)) {
				t.Fatalf("cut %d budget %d: loop %v %q, fallback %v %q", n, budget, x1, e1, x2, e2)
			}
		}
	}
}

// TestEmptyArrayShared checks the empty arrays decoded into `any` (emptyAnyArray, and the
// fallback with a box of its own): each is a non-nil []any of length and capacity 0, appending
// to one leaves the others empty, and with the shared box 100 of them cost no allocation each.
func TestEmptyArrayShared(t *testing.T) {
	defer func(v bool) { sharedEmptyArray = v }(sharedEmptyArray)
	// [[], [], {"a": [], "b": [[]]}, 100 x []] through the general decoder, and [[]] through
	// the small-message path
	big := []byte{mArray16, 0, 103, 0x90, 0x90, 0x82, 0xa1, 'a', 0x90, 0xa1, 'b', 0x91, 0x90}
	for i := 0; i < 100; i++ {
		big = append(big, 0x90)
	}
	allocs := map[bool]float64{}
	for _, shared := range []bool{true, false} {
		sharedEmptyArray = shared
		var empties []any
		var walk func(x any)
		walk = func(x any) {
			switch v := x.(type) {
			case []any:
				if len(v) == 0 {
					empties = append(empties, x)
				}
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		for _, in := range [][]byte{big, {0x91, 0x90}, {0x90}} {
			var x any
			if err := Unmarshal(in, &x); err != nil {
				t.Fatal(err)
			}
			walk(x)
		}
		if len(empties) != 104+1+1 {
			t.Fatalf("shared=%v: %d empty arrays", shared, len(empties))
		}
		for _, e := range empties {
			a := e.([]any)
			if a == nil || len(a) != 0 || cap(a) != 0 {
				t.Fatalf("shared=%v: got %#v (nil %v, cap %d)", shared, a, a == nil, cap(a))
			}
		}
		grown := append(empties[0].([]any), "x")
		grown[0] = "y"
		for _, e := range empties {
			if len(e.([]any)) != 0 {
				t.Fatalf("shared=%v: an append changed another empty array", shared)
			}
		}
		allocs[shared] = testing.AllocsPerRun(20, func() {
			var x any
			if err := Unmarshal(big, &x); err != nil {
				t.Fatal(err)
			}
		})
	}
	if allocs[true] > allocs[false]-100 {
		t.Fatalf("allocations per decode: %v shared, %v not: want 100 fewer", allocs[true], allocs[false])
	}
}
