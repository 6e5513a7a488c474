package mpk

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// orderValues are values whose maps go through each map path of the encoder: the `any` tree fast
// path (appendStringMap, at the top and nested in []any), map[string]any as a struct field (its
// type encoder), and the reflection map encoder for string, int and uint keys.
func orderValues() map[string]any {
	tree := map[string]any{}
	for i := 0; i < 40; i++ {
		tree[fmt.Sprintf("key%02d", i)] = []any{int64(i), map[string]any{"x": int64(i), "y": "v", "z": nil}}
	}
	type holder struct {
		M map[string]any
		S map[string]int
		I map[int]string
		U map[uint16]bool
	}
	h := holder{M: map[string]any{}, S: map[string]int{}, I: map[int]string{}, U: map[uint16]bool{}}
	for i := 0; i < 30; i++ {
		h.M[fmt.Sprint("m", i)] = float64(i) / 2
		h.S[fmt.Sprint("s", i)] = i
		h.I[i*7-100] = fmt.Sprint(i)
		h.U[uint16(i*1000)] = i%2 == 0
	}
	return map[string]any{"tree": tree, "nested": []any{"a", tree}, "struct": h, "mapint": h.I}
}

// decodeLike decodes b into a fresh value of v's type.
func decodeLike(t *testing.T, b []byte, v any) any {
	t.Helper()
	p := reflect.New(reflect.TypeOf(v))
	if err := Unmarshal(b, p.Interface()); err != nil {
		t.Fatalf("decode %x: %v", b, err)
	}
	return p.Elem().Interface()
}

// TestUnsortedMapKeys: UnsortedMapKeys changes only the order of pairs (the same length, and
// the same value decoded), and it does drop the sort: over 50 calls some output differs from the
// default's sorted bytes on every map path. With SortMapKeys too, the output is the sorted one.
func TestUnsortedMapKeys(t *testing.T) {
	for name, v := range orderValues() {
		sorted, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want := decodeLike(t, sorted, v)
		differs := 0
		for i := 0; i < 50; i++ {
			b, err := EncodeOptions{UnsortedMapKeys: true}.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != len(sorted) {
				t.Fatalf("%s: %d bytes unsorted, %d sorted", name, len(b), len(sorted))
			}
			if !bytes.Equal(b, sorted) {
				differs++
			}
			if got := decodeLike(t, b, v); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: unsorted decodes to %v, sorted to %v", name, got, want)
			}
			both, err := EncodeOptions{UnsortedMapKeys: true, SortMapKeys: true}.Marshal(v)
			if err != nil || !bytes.Equal(both, sorted) {
				t.Fatalf("%s: with SortMapKeys too: %x %v", name, both, err)
			}
		}
		if differs == 0 {
			t.Fatalf("%s: UnsortedMapKeys wrote the sorted bytes 50 times out of 50", name)
		}
	}
}

// TestUnsortedMapKeysEncoder: the option reaches the Encoder through SetOptions.
func TestUnsortedMapKeysEncoder(t *testing.T) {
	v := orderValues()["tree"]
	sorted, _ := Marshal(v)
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	enc.SetOptions(EncodeOptions{UnsortedMapKeys: true})
	differs := false
	for i := 0; i < 50 && !differs; i++ {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		differs = !bytes.Equal(buf.Bytes(), sorted)
	}
	if !differs {
		t.Fatal("the Encoder with UnsortedMapKeys wrote sorted bytes every time")
	}
}

// TestDefaultMapOrderStable: by default string, int and uint keys are sorted, so the bytes are the
// same on every call and in every process (a fixed encoding below), whatever Go's map order.
func TestDefaultMapOrderStable(t *testing.T) {
	for name, v := range orderValues() {
		first, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			if b, _ := Marshal(v); !bytes.Equal(b, first) {
				t.Fatalf("%s: two encodings by default", name)
			}
		}
	}
	v := map[string]any{"b": int64(1), "a": []any{map[string]any{"d": true, "c": nil}}, "": "e"}
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(b), "83a0a165a1619182a163c0a164c3a16201"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	m := map[int]int{3: 1, -1: 2, 200: 3}
	b, _ = Marshal(m)
	if got, want := hex.EncodeToString(b), "83ff020301ccc803"; got != want {
		t.Fatalf("map[int]int: got %s, want %s", got, want)
	}
}

// TestSortKeyOrder: the prefix sort orders keys as sortPairOrder (strings.Compare) does, on both
// of its paths (insertion sort up to 16 pairs, SortFunc above), with keys that share 8-byte
// prefixes, are prefixes of one another, hold zero bytes or bytes over 0x7f, or are empty.
func TestSortKeyOrder(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	alphabet := []byte{0, 1, 'a', 'b', 0x7f, 0x80, 0xff}
	for round := 0; round < 2000; round++ {
		n := r.Intn(40)
		if round%10 == 0 {
			n = r.Intn(400)
		}
		seen := map[string]bool{}
		var pairs []anyPair
		stem := string([]byte{'p', 'r', 'o', 'f', 'i', 'l', 'e', '_'})[:r.Intn(9)]
		for len(pairs) < n {
			b := []byte(stem)
			for i := r.Intn(12); i > 0; i-- {
				b = append(b, alphabet[r.Intn(len(alphabet))])
			}
			if k := string(b); !seen[k] {
				seen[k] = true
				pairs = append(pairs, anyPair{k, nil})
			}
		}
		want := make([]int32, n)
		got := make([]keyOrder, n)
		for i := range pairs {
			want[i] = int32(i)
			got[i] = keyOrder{keyPrefix(pairs[i].k), int32(i)}
		}
		sortPairOrder(want, pairs)
		// the quicksort, and its fallback to slices.SortFunc when the depth budget runs out
		fallback := append([]keyOrder(nil), got...)
		sortKeyOrder(got, pairs)
		quickSortKeys(fallback, pairs, round%2)
		for i := range want {
			if got[i].i != want[i] || fallback[i].i != want[i] {
				t.Fatalf("round %d: position %d has %q and %q, want %q", round, i, pairs[got[i].i].k, pairs[fallback[i].i].k, pairs[want[i]].k)
			}
		}
	}
}

// TestKeyShapes: maps written in a remembered key order (keyShapes) come out as reflection sorts
// them, with shapes of one length that share keys alternating, a map nested in a map of its own
// length (which takes the outer's entry while the outer is written), and maps that differ only
// in their last key; afterwards the state keeps none of the keys.
func TestKeyShapes(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	// shapes of keyShapeMin keys and more, built from a few base sets
	base := [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"b", "c", "d"}, {"x", "y", "z"}, {"profile_a", "profile_b", "profile_c"}}
	var shapes [][]string
	for _, b := range base {
		for _, n := range []int{keyShapeMin, keyShapeMin + 1} {
			var keys []string
			for i := 0; len(keys) < n; i++ {
				keys = append(keys, fmt.Sprint(b[i%len(b)], i/len(b)))
			}
			shapes = append(shapes, keys)
		}
	}
	nested := map[string]any{}
	for i := 0; i < keyShapeMin; i++ {
		nested[fmt.Sprint("n", i)] = []any{map[string]any{"u": 1.5, "v": nil, "w": true}}
	}
	var list []any
	for i := 0; i < 300; i++ {
		keys := shapes[r.Intn(len(shapes))]
		m := map[string]any{}
		for j, k := range keys {
			m[k] = int64(i*10 + j)
		}
		if i%7 == 0 {
			m[keys[0]] = nested // a map of the same length inside
		}
		list = append(list, m)
	}
	doc := map[string]any{"list": list, "a": list[:10], "b": nil}
	got, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	withReflection(func() { want, _ = Marshal(doc) })
	if !bytes.Equal(got, want) {
		t.Fatalf("remembered orders differ from reflection's sort")
	}
	e := &encodeState{}
	e.buf = e.appendAny(nil, doc)
	if !bytes.Equal(e.buf, want) || e.shapesUsed == 0 {
		t.Fatalf("appendAny differs, or remembered nothing")
	}
	e.forgetShapes()
	for i := range e.shapes {
		for _, k := range e.shapes[i].keys[:cap(e.shapes[i].keys)] {
			if k != "" {
				t.Fatalf("entry %d still holds %q", i, k)
			}
		}
	}
}

// TestKeyPrefix: keyPrefix reads the same 8-byte prefix as the byte loop, for every length up
// to 12 and every position of a high byte.
func TestKeyPrefix(t *testing.T) {
	for n := 0; n <= 12; n++ {
		for hi := -1; hi < n; hi++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + i)
			}
			if hi >= 0 {
				b[hi] = 0xff
			}
			k := string(b)
			if got, want := keyPrefix(k), keyPrefixLoop(k); got != want {
				t.Errorf("%q: %016x, want %016x", k, got, want)
			}
		}
	}
}

// TestSmallMapSort: maps of 2 to smallSortMax pairs sorted on the stack (appendStringMapSmall),
// of two pairs (appendStringMapTwo), of up to midSortMax (appendStringMapMid) and of any size
// (appendStringMapSorted, whose pair stack takes those over midSortMax) come out in the order of
// sort.Strings, byte for byte, with keys that share 8-byte prefixes, tie on their first 7 bytes,
// differ in length only, or are empty.
func TestSmallMapSort(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	// profile_ / profilex / profile_image: keys that tie on their first 7 bytes (appendPairsSorted
	// compares those as a number) and differ at the 8th or later
	stems := []string{"", "a", "id", "profile_", "profilex", "profile_image", "\xff\xff", "b", "name", "k\x00",
		"a_key_longer_than_thirty_one_bytes_"} // written by appendStringGrow, not appendKey's fixstr
	for iter := 0; iter < 4000; iter++ {
		n := 2 + r.Intn(midSortMax+8-1)
		m := map[string]any{}
		for len(m) < n {
			k := stems[r.Intn(len(stems))] + strings.Repeat("z", r.Intn(3)) + string([]byte{byte(r.Intn(4))})[:r.Intn(2)] + fmt.Sprint(r.Intn(3))[:r.Intn(2)]
			m[k] = map[string]any{k: int64(len(m)), "x": "y"}
		}
		e := &encodeState{}
		want := sortedMapRef(e, m)
		if general := e.appendStringMapSorted(nil, m); !bytes.Equal(general, want) {
			t.Fatalf("sorted %q:\n% x\n% x", m, general, want)
		}
		if n <= smallSortMax {
			if small := e.appendStringMapSmall(nil, m); !bytes.Equal(small, want) {
				t.Fatalf("small %q:\n% x\n% x", m, small, want)
			}
		}
		if n == 2 {
			if two := e.appendStringMapTwo(nil, m); !bytes.Equal(two, want) {
				t.Fatalf("two pairs %q:\n% x\n% x", m, two, want)
			}
		}
		var shape []string
		mid, ok := e.appendStringMapMid(nil, m, &shape)
		if ok != (n <= midSortMax) {
			t.Fatalf("appendStringMapMid of %d pairs reported %v", n, ok)
		}
		if ok {
			if !bytes.Equal(mid, want) {
				t.Fatalf("mid %q:\n% x\n% x", m, mid, want)
			}
			keys := slices.Sorted(maps.Keys(m))
			if !slices.Equal(shape, keys) {
				t.Fatalf("remembered %q, want %q", shape, keys)
			}
		}
	}
}

// TestTwoKeyCache: maps of two pairs whose keys are the last such map's (looked up, not ranged)
// come out as reflection writes them when they repeat, alternate with other key pairs, share one
// key with the remembered pair, or hold another map of two pairs in the value written first
// (which replaces the remembered keys while the outer map is being written); and the pooled state
// keeps none of the keys after Marshal.
func TestTwoKeyCache(t *testing.T) {
	two := func(a string, va any, b string, vb any) map[string]any { return map[string]any{a: va, b: vb} }
	var list []any
	for i := 0; i < 20; i++ {
		list = append(list,
			two("areaId", int64(i), "blockIds", []any{int64(i)}),
			two("areaId", int64(i), "blockIds", []any{}),
			two("b", two("z", int64(i), "a", "x"), "a", two("z", "y", "a", two("q", 1.5, "p", nil))),
			two("areaId", "only one key", "other", int64(i)),
			two("blockIds", int64(i), "areaId", true),
			two("", int64(i), "\x00", "empty and NUL keys"),
			two("", int64(i), "\x00", "twice"),
		)
	}
	for _, v := range []any{list, []any{list, list}, two("outer", list, "again", list)} {
		out, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var slow []byte
		withReflection(func() { slow, _ = Marshal(v) })
		if !bytes.Equal(out, slow) {
			t.Fatalf("fast path and reflection differ:\n% x\n% x", out, slow)
		}
	}
	e := &encodeState{}
	e.appendAny(nil, list)
	if e.twoN != 2 {
		t.Fatalf("%d key pairs remembered", e.twoN)
	}
	e.forgetShapes()
	if e.twoN != 0 || e.two != [2][2]string{} {
		t.Fatalf("keys kept after forgetShapes: %q", e.two)
	}
}

// sortedMapRef is a map's pairs, without the header, in the order of sort.Strings: the portable
// reference of the map writers TestSmallMapSort checks.
func sortedMapRef(e *encodeState, m map[string]any) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = appendStringGrow(b, k)
		b = e.appendAny(b, m[k])
	}
	return b
}

// TestShapeStackPath: records with a remembered key list are written by appendByShape when they
// have up to shapeStackMax keys, through the pair stack when they have more, and through the
// pair stack too when a record of the same length holds another whose key list is being read
// (a busy entry); all three give reflection's bytes, and no entry is left busy.
func TestShapeStackPath(t *testing.T) {
	record := func(n, i int, prefix string) map[string]any {
		m := map[string]any{}
		for j := 0; j < n; j++ {
			m[fmt.Sprint(prefix, j)] = int64(i*100 + j)
		}
		return m
	}
	var list []any
	for i := 0; i < 20; i++ {
		list = append(list, record(20, i, "k"), record(shapeStackMax+6, i, "w"))
		inner := record(20, i, "k")
		outer := record(20, i, "k")
		outer["k0"] = []any{inner, record(20, i, "q")} // same length, same and other keys, nested
		list = append(list, outer)
	}
	doc := []any{list}
	e := &encodeState{}
	got := e.appendAny(nil, doc)
	var want []byte
	withReflection(func() { want, _ = Marshal(doc) })
	if !bytes.Equal(got, want) {
		t.Fatal("remembered orders differ from reflection's sort")
	}
	if e.shapesBusy != 0 {
		t.Fatalf("busy entries left: %b", e.shapesBusy)
	}
}

// TestUnsortedTwoPairMaps: under UnsortedMapKeys a map of two pairs goes through the sorted
// writer of two pairs (appendStringMapTwo, whose remembered keys spare the range: citm_catalog's
// 9,592 such maps), so its pairs come out sorted, for maps whose keys repeat (lookups), alternate
// between two pairs of keys, or never repeat (the range); the maps around them keep Go's order.
func TestUnsortedTwoPairMaps(t *testing.T) {
	var a []any
	for i := 0; i < 300; i++ {
		switch i % 3 {
		case 0:
			a = append(a, map[string]any{"blockIds": []any{}, "areaId": int64(i)})
		case 1:
			a = append(a, map[string]any{"name": "n", "id": int64(i)})
		default:
			a = append(a, map[string]any{fmt.Sprint("k", i): true, fmt.Sprint("j", i): nil})
		}
	}
	sorted, err := Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b, err := EncodeOptions{UnsortedMapKeys: true}.Marshal(a)
		if err != nil || !bytes.Equal(b, sorted) {
			t.Fatalf("maps of two pairs not in sorted order under UnsortedMapKeys (%v)", err)
		}
	}
}
