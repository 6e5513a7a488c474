package mpk

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// randomAnyTree builds an `any` tree of the shapes appendAny handles itself, with leaves it hands to
// reflection (structs, time, int8, float32, map[any]any, nil typed values) mixed in.
func randomAnyTree(r *rand.Rand, depth int) any {
	n := r.Intn(18)
	if depth > 4 && n < 3 {
		n += 3
	}
	switch n {
	case 0:
		m := map[string]any{}
		for i := r.Intn(20); i > 0; i-- {
			m[strings.Repeat("k", r.Intn(40))+string(rune('a'+r.Intn(26)))] = randomAnyTree(r, depth+1)
		}
		return m
	case 1:
		a := make([]any, r.Intn(20))
		for i := range a {
			a[i] = randomAnyTree(r, depth+1)
		}
		return a
	case 2:
		return map[string]any{"one": randomAnyTree(r, depth+1)}
	case 3:
		return strings.Repeat("s", r.Intn(70000)&^r.Intn(70000))
	case 4:
		return int64(r.Uint64())
	case 5:
		return int64(r.Intn(300) - 150)
	case 6:
		return r.NormFloat64()
	case 7:
		return r.Intn(2) == 0
	case 8:
		return nil
	case 9:
		return r.Uint64()
	case 10:
		return r.Intn(1 << 20)
	case 11:
		b := make([]byte, r.Intn(300))
		r.Read(b)
		return b
	case 12:
		return []byte(nil)
	case 13:
		return map[string]any(nil)
	case 14:
		return []any(nil)
	case 15:
		return struct {
			A int8
			B float32
			C []string
		}{int8(r.Intn(100)), float32(r.NormFloat64()), []string{"x"}}
	case 16:
		return time.Unix(r.Int63n(1<<40), int64(r.Intn(1e9))).UTC()
	}
	return map[any]any{int64(1): "a", "b": math.Inf(1)}
}

// withReflection runs f with appendAny turned off, as a registered codec for one of its types
// does: Marshal then takes the reflection encoders all the way down.
func withReflection(f func()) {
	anyTreeOverridden.Store(true)
	defer anyTreeOverridden.Store(false)
	f()
}

// TestAnyTreeFastPathMatchesReflection: appendAny writes the same bytes as the reflection
// encoders for random trees, at the top level, inside a struct field and inside a []any.
func TestAnyTreeFastPathMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	type holder struct {
		V any
		M map[string]any
	}
	for i := 0; i < 400; i++ {
		tree := randomAnyTree(r, 0)
		m, _ := tree.(map[string]any)
		for _, v := range []any{tree, holder{tree, m}, []any{tree, tree}} {
			fast, err1 := EncodeOptions{SortMapKeys: true}.Marshal(v)
			var slow []byte
			var err2 error
			withReflection(func() { slow, err2 = EncodeOptions{SortMapKeys: true}.Marshal(v) })
			if err1 != nil || err2 != nil {
				t.Fatalf("tree %d: %v / %v", i, err1, err2)
			}
			if !bytes.Equal(fast, slow) {
				t.Fatalf("tree %d: fast path %s\nreflection %s", i, hex.EncodeToString(fast), hex.EncodeToString(slow))
			}
		}
	}
}

// TestAnyTreeCycle: a []any or map[string]any that holds itself is an error, not a stack
// overflow.
func TestAnyTreeCycle(t *testing.T) {
	a := []any{1, nil}
	a[1] = a
	m := map[string]any{"x": 1}
	m["self"] = m
	for _, v := range []any{a, m, map[string]any{"a": a}} {
		if _, err := Marshal(v); err == nil || !strings.Contains(err.Error(), "nested more than") {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// TestGrowDouble: growDouble keeps the bytes, makes room for n more, and at least doubles.
func TestGrowDouble(t *testing.T) {
	b := append(make([]byte, 0, 4), 1, 2, 3)
	g := growDouble(b, 10)
	if !bytes.Equal(g, []byte{1, 2, 3}) || cap(g)-len(g) < 10 {
		t.Fatalf("%v cap %d", g, cap(g))
	}
	g2 := growDouble(g, 1)
	if &g2[0] != &g[0] {
		t.Error("grew with room left")
	}
	big := make([]byte, 1000)
	if g := growDouble(big, 1); cap(g) < 2000 {
		t.Errorf("cap %d, want at least doubled", cap(g))
	}
}

// TestAnyTreeRespectsRegisteredCodec: a codec registered for a type appendAny writes itself
// (int64 here) is used inside `any` trees too. In a child process: registrations are global.
func TestAnyTreeRespectsRegisteredCodec(t *testing.T) {
	if os.Getenv("MPK_CODEC_CHILD") == "1" {
		RegisterCodec(func(b []byte, v int64) ([]byte, error) { return AppendString(b, "int"), nil }, nil)
		out, err := Marshal(map[string]any{"a": []any{int64(5), "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if want := "81a16192a3696e74a178"; hex.EncodeToString(out) != want {
			t.Fatalf("got %x want %s", out, want)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAnyTreeRespectsRegisteredCodec$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "MPK_CODEC_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestAnyTreeRespectsRegisteredCodec")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestSmallTreeOneAllocation: a small array is sized and written into its one allocation, of
// exactly its size.
func TestSmallTreeOneAllocation(t *testing.T) {
	v := []any{int64(1), []any{"ab", []byte{1, 2}, 2.5, nil, true, uint64(1 << 40), -70}}
	out, err := Marshal(v)
	if err != nil || len(out) != cap(out) {
		t.Fatalf("len %d cap %d %v", len(out), cap(out), err)
	}
	var slow []byte
	withReflection(func() { slow, _ = Marshal(v) })
	if !bytes.Equal(out, slow) {
		t.Fatalf("% x, reflection % x", out, slow)
	}
	var x any = v // (a []any converted to an `any` at the call would be an allocation of the caller's)
	if n := testing.AllocsPerRun(50, func() { Marshal(x) }); n != 1 {
		t.Errorf("%v allocations", n)
	}
}

// TestLoneStringMarshal: a lone string or bin of loneGatherMin bytes or more, joined to its head
// (marshalLone), and one just below, through the sized small-tree walk, are what reflection
// writes (str8/16/32 and bin8/16/32 heads on both sides of each bound), in one allocation of
// about its size (the head's array escaped before: two).
func TestLoneStringMarshal(t *testing.T) {
	for _, n := range []int{loneGatherMin - 1, loneGatherMin, loneGatherMin + 7, 8192, 1 << 20, 65535, 65536, 255, 256} {
		data := bytes.Repeat([]byte("0123456789abcdefg"), n/17+1)[:n]
		for _, v := range []any{string(data), data} {
			out, err := Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var slow []byte
			withReflection(func() { slow, _ = Marshal(v) })
			if !bytes.Equal(out, slow) {
				t.Fatalf("%T of %d bytes: head % x, reflection's % x", v, n, out[:min(8, len(out))], slow[:min(8, len(slow))])
			}
			if cap(out)-len(out) >= 8192 { // its own allocation, not a doubled buffer
				t.Errorf("%T of %d bytes: len %d cap %d", v, n, len(out), cap(out))
			}
			if a := testing.AllocsPerRun(20, func() { Marshal(v) }); a != 1 {
				t.Errorf("%T of %d bytes: %v allocations", v, n, a)
			}
		}
	}
}

// TestGatheredMarshal: trees of long strings and bins written by marshalGathered (pieces joined)
// are what the buffered path and reflection write, for pieces on both sides of gatherMinPiece
// and of every head size, nested arrays and every leaf the walk takes; trees it does not take
// (a map inside, other types, too deep) are declined and still encoded right by Marshal.
func TestGatheredMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	sizes := []int{0, 1, 31, 32, gatherMinPiece - 1, gatherMinPiece, 255, 256, 4096, 65535, 65536, 70000}
	leaf := func() any {
		n := sizes[r.Intn(len(sizes))]
		switch r.Intn(9) {
		case 0, 1, 2:
			return strings.Repeat(string(rune('a'+r.Intn(26))), n)
		case 3, 4:
			b := make([]byte, n)
			r.Read(b)
			return b
		case 5:
			return []byte(nil)
		case 6:
			return int64(r.Uint64()) >> r.Intn(64)
		case 7:
			return r.NormFloat64()
		}
		return []any{nil, true, uint64(1 << 63), -7, []any(nil)}
	}
	for i := 0; i < 300; i++ {
		a := make([]any, 1+r.Intn(40))
		for j := range a {
			a[j] = leaf()
			if r.Intn(6) == 0 {
				a[j] = []any{leaf(), leaf(), []any{leaf()}}
			}
		}
		buffered := bufferedMarshal(t, a)
		var slow []byte
		withReflection(func() { slow, _ = Marshal(a) })
		if !bytes.Equal(buffered, slow) {
			t.Fatalf("buffered path and reflection differ")
		}
		if out, ok := marshalGathered(a); ok && !bytes.Equal(out, buffered) {
			t.Fatalf("%d: gathered %d bytes differ from the buffered path's %d", i, len(out), len(buffered))
		}
		if out, err := Marshal(a); err != nil || !bytes.Equal(out, buffered) {
			t.Fatalf("%d: Marshal differs from the buffered path (%v)", i, err)
		}
	}
	long := strings.Repeat("x", 4096)
	if out, ok := marshalGathered([]any{long, long}); !ok || len(out) != 2*4099+1 {
		t.Fatalf("two long strings not gathered: %v %d", ok, len(out))
	}
	deep := any(long)
	for range gatherDepth + 1 {
		deep = []any{deep}
	}
	for _, v := range []any{
		[]any{long, map[string]any{"a": long}},
		[]any{long, int32(1)},
		[]any{strings.Repeat("y", gatherMinTotal-1)},
		deep,
	} {
		out, err := Marshal(v)
		var slow []byte
		withReflection(func() { slow, _ = Marshal(v) })
		if err != nil || !bytes.Equal(out, slow) {
			t.Fatalf("Marshal differs from reflection (%v)", err)
		}
	}
	if _, ok := marshalGathered([]any{long, map[string]any{"a": long}}); ok {
		t.Error("a map inside taken")
	}
	if _, ok := marshalGathered(deep); ok {
		t.Error("too deep taken")
	}
	if _, ok := marshalGathered([]any{strings.Repeat("y", gatherMinTotal-1)}); ok {
		t.Error("pieces under gatherMinTotal taken")
	}
	// The small arrays' version (marshalSmallGathered): random small trees with a long leaf at
	// the top against the small-tree path, and what it declines.
	for i := 0; i < 300; i++ {
		a := make([]any, 1+r.Intn(smallTreeTop))
		for j := range a {
			a[j] = leaf()
		}
		a[r.Intn(len(a))] = strings.Repeat("L", loneGatherMin+r.Intn(3000))
		budget := smallTreeNodes
		n, ok := smallTreeSize(a, 0, &budget)
		out, gok := marshalSmallGathered(a)
		if gok != ok && !(ok && countPieces(a) > smallPieces) {
			t.Fatalf("%d: gathered %v, small tree %v", i, gok, ok)
		}
		if gok && !bytes.Equal(out, appendSmallTree(make([]byte, 0, n), a)) {
			t.Fatalf("%d: gathered and small-tree bytes differ", i)
		}
	}
	five := []any{long, long, long, long, long}
	for _, v := range [][]any{five, {long, map[string]any{}}, {long, int32(1)}, {deep, long}, {int64(1), "short"}} {
		if _, ok := marshalSmallGathered(v); ok {
			t.Errorf("small: %d elements taken", len(v))
		}
	}
	if out, ok := marshalSmallGathered(five[:4]); !ok || !bytes.Equal(out, bufferedMarshal(t, five[:4])) {
		t.Error("four pieces not taken, or wrong")
	}
	// Marshal takes it for an array of more than smallTreeTop long strings, and for a small tree
	// that is mostly one bin (Test4's shape): one allocation, the result's.
	var arr any = []any{long, long, long, long, long, long, long, long, long, long, long, long, long, long, long, long, long}
	var t4 any = []any{[]any{int64(1), int64(2)}, []any{int64(-1), int64(-2)}, make([]byte, 8192)}
	for _, v := range []any{arr, t4} {
		if n := testing.AllocsPerRun(20, func() { Marshal(v) }); n != 1 && !raceEnabled {
			t.Errorf("%d allocations", int(n))
		}
		out, _ := Marshal(v)
		if !bytes.Equal(out, bufferedMarshal(t, v)) || cap(out) != len(out) {
			t.Errorf("differs from the buffered path, or not its exact size (len %d cap %d)", len(out), cap(out))
		}
	}
}

// countPieces counts the strings and bins of gatherMinPiece bytes or more in a tree.
func countPieces(x any) int {
	switch x := x.(type) {
	case string:
		if len(x) >= gatherMinPiece {
			return 1
		}
	case []byte:
		if len(x) >= gatherMinPiece {
			return 1
		}
	case []any:
		n := 0
		for _, e := range x {
			n += countPieces(e)
		}
		return n
	}
	return 0
}

// bufferedMarshal is Marshal by the buffered path alone (encodeState.appendAny), the fallback of
// the small-tree, lone and gathered paths.
func bufferedMarshal(t *testing.T, v any) []byte {
	t.Helper()
	e := encodeStatePool.Get().(*encodeState)
	e.buf, e.err, e.flags, e.depth = e.buf[:0], nil, 0, 0
	e.encode(v)
	if e.err != nil {
		t.Fatal(e.err)
	}
	out := cloneBytes(e.buf)
	e.forgetShapes()
	encodeStatePool.Put(e)
	return out
}

// TestGatheredKeepsNothing: the pooled gather state lets go of the caller's bytes when Marshal
// returns (a piece left in it would keep a large bin alive for as long as the pool keeps the
// state, through one garbage collection at least).
func TestGatheredKeepsNothing(t *testing.T) {
	done := make(chan struct{})
	func() {
		big := make([]byte, 1<<20)
		runtime.SetFinalizer(&big[0], func(*byte) { close(done) })
		if _, ok := marshalGathered([]any{big, big}); !ok {
			t.Fatal("not gathered")
		}
	}()
	runtime.GC()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the bin is still reachable after one collection")
	}
}

// TestFlatArray: marshalFlatArray writes what reflection writes for arrays of up to 15 ints,
// floats, bools and nils, in one allocation of exactly its size, and declines anything else.
func TestFlatArray(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	leaves := []func() any{
		func() any { return int64(r.Intn(70) - 35) },
		func() any { return int64(r.Uint64()) >> r.Intn(64) },
		func() any { return -int64(r.Uint64() >> r.Intn(64)) },
		func() any { return r.NormFloat64() },
		func() any { return r.Intn(2) == 0 },
		func() any { return nil },
	}
	for i := 0; i < 500; i++ {
		a := make([]any, r.Intn(16))
		for j := range a {
			a[j] = leaves[r.Intn(len(leaves))]()
		}
		out, ok := marshalFlatArray(a)
		var slow []byte
		withReflection(func() { slow, _ = Marshal(a) })
		if !ok || !bytes.Equal(out, slow) || len(out) != cap(out) {
			t.Fatalf("%v: %x (cap %d, %v), reflection %x", a, out, cap(out), ok, slow)
		}
	}
	for _, a := range [][]any{nil, make([]any, 16), {"s"}, {int64(1), []any{}}, {1}, {uint64(1)}} {
		if _, ok := marshalFlatArray(a); ok {
			t.Fatalf("%#v taken", a)
		}
	}
	var x any = []any{int64(1), int64(2)}
	if n := testing.AllocsPerRun(50, func() { Marshal(x) }); n != 1 {
		t.Errorf("[1,2]: %v allocations", n)
	}
}

// TestSizedArrayMarshal: a flat array of strings, bins and scalars written by marshalSizedArray
// (sized first, then written into one allocation of that size) is what the buffered path (its
// fallback) and reflection write, for strings and bins on both sides of every head bound, ints
// of every width, array heads of 16 bits, and one allocation of exactly the bytes it needs; an
// array with a container among its leaves is declined, by the samples or by the sizing pass, and
// Marshal still writes it right.
func TestSizedArrayMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	sizes := []int{0, 1, 31, 32, 255, 256, 1023, 4095, 65535, 65536}
	ints := []int64{0, 127, 128, -32, -33, 255, 256, -129, 65535, 65536, -32769, math.MaxUint32, math.MaxUint32 + 1, math.MinInt64}
	short := false // the long arrays take strings and bins of up to 256 bytes (a fast test)
	leaf := func() any {
		n := sizes[r.Intn(len(sizes))]
		if short {
			n = sizes[r.Intn(6)]
		}
		switch r.Intn(11) {
		case 0, 1, 2:
			return strings.Repeat(string(rune('a'+r.Intn(26))), n)
		case 3:
			b := make([]byte, n)
			r.Read(b)
			return b
		case 4:
			return []byte(nil)
		case 5:
			return ints[r.Intn(len(ints))]
		case 6:
			return int(ints[r.Intn(len(ints))])
		case 7:
			return uint64(ints[r.Intn(len(ints))])
		case 8:
			return r.NormFloat64()
		case 9:
			return r.Intn(2) == 0
		}
		return nil
	}
	for i := 0; i < 200; i++ {
		a := make([]any, smallTreeTop+1+r.Intn(40))
		short = i%10 == 0
		if short {
			a = make([]any, 16+r.Intn(bulkArrayTop-16)) // array16 heads
		}
		for j := range a {
			a[j] = leaf()
		}
		a[len(a)-1] = "last"
		out, ok := marshalSizedArray(a)
		if !ok {
			t.Fatalf("%d: a flat array of leaves declined", i)
		}
		buffered := bufferedMarshal(t, a)
		if !bytes.Equal(out, buffered) {
			t.Fatalf("%d: sized %d bytes differ from the buffered path's %d", i, len(out), len(buffered))
		}
		if i < 20 {
			var slow []byte
			withReflection(func() { slow, _ = Marshal(a) })
			if !bytes.Equal(out, slow) {
				t.Fatalf("%d: sized bytes differ from reflection's", i)
			}
			// sized right: one allocation (a short size would grow it)
			if n := testing.AllocsPerRun(5, func() { marshalSizedArray(a) }); n != 1 && !raceEnabled {
				t.Fatalf("%d: %v allocations", i, n)
			}
		}
		if got, err := Marshal(a); err != nil || !bytes.Equal(got, buffered) {
			t.Fatalf("%d: Marshal differs from the buffered path (%v)", i, err)
		}
	}
	// c_strings' shape through Marshal: taken, exact size
	cs := make([]any, 1024)
	for i := range cs {
		cs[i] = strings.Repeat("c", i)
	}
	if out, err := Marshal(cs); err != nil || !bytes.Equal(out, bufferedMarshal(t, cs)) || cap(out)-len(out) > len(out)/8 {
		t.Fatalf("c_strings shape: %v len %d cap %d", err, len(out), cap(out))
	}
	var csv any = cs
	if n := testing.AllocsPerRun(5, func() { Marshal(csv) }); n != 1 && !raceEnabled {
		t.Errorf("c_strings shape: %v allocations", n)
	}
	// declined: a container or another type among the leaves, sampled or not
	for _, pos := range []int{0, 5, 20, 39} {
		for _, odd := range []any{map[string]any{"a": "b"}, []any{"x"}, int32(3), time.Unix(1, 0)} {
			a := make([]any, 40)
			for j := range a {
				a[j] = strings.Repeat("s", j)
			}
			a[pos] = odd
			if _, ok := marshalSizedArray(a); ok {
				t.Fatalf("%T at %d taken", odd, pos)
			}
			out, err := Marshal(a)
			var slow []byte
			withReflection(func() { slow, _ = Marshal(a) })
			if err != nil || !bytes.Equal(out, slow) {
				t.Fatalf("%T at %d: Marshal differs from reflection (%v)", odd, pos, err)
			}
		}
	}
}
