package mpk

import (
	"errors"
	"math/rand"
	"reflect"
	"runtime"
	"testing"
)

// randomTree builds a random value of nested []any and map[string]any with scalar leaves.
func randomTree(r *rand.Rand, depth int) any {
	if depth == 0 || r.Intn(3) == 0 {
		switch r.Intn(4) {
		case 0:
			return nil
		case 1:
			return int64(r.Intn(300) - 100)
		case 2:
			return "s"
		}
		return true
	}
	n := r.Intn(6)
	if r.Intn(2) == 0 {
		a := make([]any, n)
		for i := range a {
			a[i] = randomTree(r, depth-1)
		}
		return a
	}
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		m[string(rune('a'+i))] = randomTree(r, depth-1)
	}
	return m
}

// TestOpenContainersBound checks the bound on declared counts across open containers against
// its two failure modes: a valid input refused (every prefix of a random tree's encoding that
// is the whole encoding must decode), and a cut input reported differently than the spec's
// one-shot order says (the error must be Skip's, which allocates nothing, whatever the target).
func TestOpenContainersBound(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		v := randomTree(r, 4)
		b, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back any
		if err := Unmarshal(b, &back); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if !reflect.DeepEqual(normalize(back), normalize(v)) {
			t.Fatalf("%x: got %v, want %v", b, back, v)
		}
		for cut := 0; cut < len(b); cut++ {
			p := b[:cut]
			_, want := Skip(p)
			for _, into := range []any{new(any), new([]any), new(map[string]any), new(RawMessage)} {
				got := Unmarshal(p, into)
				var de, wde *DecodeError
				if !errors.As(got, &de) || !errors.As(want, &wde) || *de != *wde {
					t.Fatalf("%x cut at %d into %T: got %v, want %v", b, cut, into, got, want)
				}
			}
		}
	}
}

func normalize(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
}

// TestOpenContainersRefusedBeforeAllocating: `92 dc ff ff ...` declares an inner array that
// fits in the bytes left on its own but not with the element its parent still owes; decoding it
// into any target reports the spec's error (Skip's) and allocates nothing for the count.
func TestOpenContainersRefusedBeforeAllocating(t *testing.T) {
	data := append([]byte{0x92, 0xdc, 0xff, 0xff}, make([]byte, 0xffff)...) // 65535 zeros, then the input ends
	_, want := Skip(data)
	var wde *DecodeError
	if !errors.As(want, &wde) || wde.Kind != Truncated || wde.Offset != int64(len(data)) {
		t.Fatalf("Skip: %v", want)
	}
	for _, into := range []any{new(any), new([][]int64), new([][4096]byte), new([]map[string]int)} {
		var before, after runtimeAlloc
		before.read()
		err := Unmarshal(data, into)
		after.read()
		var de *DecodeError
		if !errors.As(err, &de) || *de != *wde {
			t.Errorf("into %T: got %v, want %v", into, err, want)
		}
		if got := after.total - before.total; got > 64<<10 {
			t.Errorf("into %T: allocated %d bytes", into, got)
		}
	}
}

type runtimeAlloc struct{ total uint64 }

func (a *runtimeAlloc) read() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	a.total = m.TotalAlloc
}
