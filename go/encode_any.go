package mpk

import (
	"bytes"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"
)

// The `any` tree encoder: JSON-like documents held as map[string]any / []any with strings,
// float64, int64, bool and nil leaves (what Unmarshal into an `any` and encoding/json give).
// These functions write such a tree with one type switch per node and no reflection; any other
// type inside the tree goes to the reflection encoder (encodeReflect), which is the portable
// path they are tested against (TestAnyTreeFastPathMatchesReflection).

// appendAny appends the encoding of x to b. It works on a local slice rather than e.buf (one
// load and store per node fewer) and is the whole of Marshal for an `any` tree: Marshal of
// twitter.json as `any` spent a third of its time in reflect.Value.Index / Interface on the
// []any elements before it (CPU profile, go/bench), and of a []any of a million int64 two
// thirds.
func (e *encodeState) appendAny(b []byte, x any) []byte {
	switch x := x.(type) {
	case nil:
		return append(b, mNil)
	case string:
		return appendStringGrow(b, x)
	case int64:
		return AppendInt(b, x)
	case float64:
		return AppendFloat64(b, x)
	case bool:
		return AppendBool(b, x)
	case map[string]any:
		if x == nil {
			return append(b, mNil)
		}
		return e.appendStringMap(b, x)
	case []any:
		if x == nil {
			return append(b, mNil)
		}
		return e.appendArray(b, x)
	case int:
		return AppendInt(b, int64(x))
	case uint64:
		return AppendUint(b, x)
	case []byte:
		if x == nil {
			return append(b, mNil)
		}
		b = growDouble(b, len(x)+5)
		return AppendBytes(b, x)
	}
	return e.appendReflect(b, x)
}

// appendReflect encodes x by reflection, out of appendAny so that appendAny's frame stays small.
//
//go:noinline
func (e *encodeState) appendReflect(b []byte, x any) []byte {
	e.buf = b
	if e.enterNested() {
		e.encodeReflect(x)
	}
	e.depth--
	return e.buf
}

// encodeReflect encodes x by its type's encoder (reflection).
func (e *encodeState) encodeReflect(x any) {
	rv := reflect.ValueOf(x)
	typeEncoder(rv.Type(), e.flags)(e, rv)
}

// appendArray appends the elements of an []any.
func (e *encodeState) appendArray(b []byte, x []any) []byte {
	b = AppendArrayHeader(b, uint32(len(x)))
	if !e.enterNested() {
		e.depth--
		return b
	}
	for _, v := range x {
		// room for a scalar, checked once here so that the appends below never grow b by
		// append's own rule (see growDouble)
		if cap(b)-len(b) < 16 {
			b = growDouble(b, 16)
		}
		// appendLeafOrAny, written out: the compiler does not inline it
		switch v := v.(type) {
		case float64:
			b = AppendFloat64(b, v)
		case int64:
			b = AppendInt(b, v)
		case string:
			b = appendStringGrow(b, v)
		default:
			b = e.appendAny(b, v)
		}
	}
	e.depth--
	return b
}

// appendLeafOrAny writes the common leaves (float64, int64, string) without the call to
// appendAny, whose frame costs more than writing a float; appendArray has the same switch
// written out. Measured with callgrind on rb_geojson's coordinate arrays (go/bench cmd/prof):
// appendArray and appendAny took about 60 instructions a node against tinylib/msgp's 30 before;
// after, Marshal of rb_geojson is on a par with msgp.AppendIntf (the counts of both vary by up to
// 2x between runs on this loaded machine with the garbage collector's work, so no finer figure).
func (e *encodeState) appendLeafOrAny(b []byte, v any) []byte {
	switch v := v.(type) {
	case float64:
		return AppendFloat64(b, v)
	case int64:
		return AppendInt(b, v)
	case string:
		return appendStringGrow(b, v)
	}
	return e.appendAny(b, v)
}

// appendStringMap appends a map[string]any with its keys sorted (the order Marshal documents).
// The pairs are sorted in a stack shared by the nested maps of one Marshal (pooled with the
// state), rather than in a slice of keys made per map: a JSON-like document has a map per object,
// and the per-map slice was one allocation each; taking the value with its key also saves a
// lookup per pair. What is sorted is a slice of indexes into the pairs: it holds no pointers, so
// the swaps cost no GC write barriers (sorting the pairs themselves spent half of Marshal's time
// on twitter.json in them, CPU profile). A map of one pair needs no sort.
func (e *encodeState) appendStringMap(b []byte, m map[string]any) []byte {
	if e.flags&flagUnsorted != 0 {
		return e.appendStringMapUnsorted(b, m)
	}
	b = AppendMapHeader(b, uint32(len(m)))
	if !e.enterNested() {
		e.depth--
		return b
	}
	if len(m) == 1 {
		for k, v := range m {
			b = appendStringGrow(b, k)
			b = e.appendAny(b, v)
		}
		e.depth--
		return b
	}
	if len(m) == 2 {
		b = e.appendStringMapTwo(b, m)
	} else if len(m) <= smallSortMax {
		b = e.appendStringMapSmall(b, m)
	} else {
		b = e.appendStringMapSorted(b, m)
	}
	e.depth--
	return b
}

// smallSortMax: maps of up to this many pairs are sorted on the stack (appendStringMapSmall);
// larger ones may find their keys in keyShapes. Measured (callgrind, as below): 8, 11 and 16
// gave rb_twitter 246.6k, 235.1k and 263.1k instructions per Marshal, citm_catalog 13.00M,
// 13.00M and 13.39M.
const smallSortMax = keyShapeMin - 1

// appendStringMapSmall writes the pairs of a map of 3 to smallSortMax pairs in key order: what
// appendPairsSorted does, written out on arrays of its own, because the call and the slices'
// bounds checks cost more than the sort on such maps (callgrind, go/bench cmd/prof, instructions
// per Marshal as `any`: rb_twitter 222k against 230k through appendPairsSorted, citm_catalog
// 11.63M against 11.86M, js_protobufjs_bench 7216 against 7700). TestSmallMapSort checks it
// against sort.Strings' order.
func (e *encodeState) appendStringMapSmall(b []byte, m map[string]any) []byte {
	var ord [smallSortMax]uint64
	var ks [smallSortMax]string
	var vs [smallSortMax]any
	n := 0
	for k, v := range m {
		if n == smallSortMax {
			break // the map grew under us (a data race): write what fits the header
		}
		ks[n], vs[n] = k, v
		p := smallOrder(k, n)
		j := n
		for ; j > 0; j-- {
			q := ord[j-1]
			if p^q > 0xff { // the first 7 bytes differ
				if p > q {
					break
				}
			} else if k > ks[q&0xff] {
				break
			}
			ord[j] = q
		}
		ord[j] = p
		n++
	}
	for _, o := range ord[:n] {
		i := o & 0xff
		b = appendKey(b, ks[i])
		b = e.appendLeafOrAny(b, vs[i])
	}
	return b
}

// midSortMax: maps of keyShapeMin to midSortMax pairs whose keys are not a remembered list are
// sorted on the stack too (appendStringMapMid), in arrays of this size.
const midSortMax = 32

// appendStringMapMid is appendStringMapSmall for maps of keyShapeMin to midSortMax pairs, with
// arrays of midSortMax (clearing those on every small map cost what it saved), and remembers the
// sorted keys in shape (keyShapes) unless shape is nil. Why: such a map went through the pooled
// pair stack and sortKeyOrder's quicksort: js_msgpack_lite_example (one map of 24 keys) spent
// 3,253 of its 15,766 instructions per Marshal in the sort and 1,032 in filling the pair and
// order stacks (callgrind, go/bench cmd/prof; msgp 11,371 in all); see bench/README.md for after.
// appendStringMapSorted's pair stack, which takes every size, is the fallback TestSmallMapSort
// checks it against.
func (e *encodeState) appendStringMapMid(b []byte, m map[string]any, shape *[]string) ([]byte, bool) {
	var ord [midSortMax]uint64
	var ks [midSortMax]string
	var vs [midSortMax]any
	return e.appendPairsSorted(b, m, ord[:], ks[:], vs[:], shape)
}

// appendPairsSorted writes the pairs of m (at most len(ord) of them) in key order, sorted in the
// caller's arrays ord, ks and vs (on its stack: no pair stack, no write barriers, no clearing
// after), and reports false, having written nothing, when m has more pairs than they hold. Each
// pair is stored once, where the range gives it; what the insertion sort moves is one word per
// pair (smallOrder: the key's first 7 bytes over the pair's index), compared as a number, the keys
// themselves only when their first 7 bytes tie. When shape is not nil the sorted keys are
// remembered there (keyShapes) before any value is written. Measured (callgrind, go/bench
// cmd/prof, instructions per Marshal as `any`, default sorted keys): citm_catalog, whose maps
// mostly have 2 to 8 keys, spent about 4 of its 16 million instructions gathering, sorting and
// clearing pairs in the pooled stack for such maps, and moving whole pairs (prefix, key and value:
// five words) in the insertion sort cost another 0.5 million of the 13.0 million left; see
// bench/README.md for after.
func (e *encodeState) appendPairsSorted(b []byte, m map[string]any, ord []uint64, ks []string, vs []any, shape *[]string) ([]byte, bool) {
	if len(m) > len(ord) || len(ks) < len(ord) || len(vs) < len(ord) {
		return b, false
	}
	n := 0
	for k, v := range m {
		if n == len(ord) {
			break // the map grew under us (a data race): write what fits the header
		}
		ks[n], vs[n] = k, v
		p := smallOrder(k, n)
		j := n
		for ; j > 0; j-- {
			q := ord[j-1]
			if p^q > 0xff { // the first 7 bytes differ
				if p > q {
					break
				}
			} else if k > ks[q&0xff] {
				break
			}
			ord[j] = q
		}
		ord[j] = p
		n++
	}
	if shape != nil {
		keys := (*shape)[:0]
		for _, o := range ord[:n] {
			keys = append(keys, ks[o&0xff])
		}
		*shape = keys
	}
	for _, o := range ord[:n] {
		i := o & 0xff
		b = appendKey(b, ks[i])
		b = e.appendLeafOrAny(b, vs[i])
	}
	return b, true
}

// appendStringMapTwo writes a map of two pairs in key order: the range's two pairs in locals,
// one comparison. Why: citm_catalog holds 9,592 maps of two keys (of 10,937 maps), and
// appendStringMapSmall's arrays (55 words cleared on entry), loop and index cost each about 70
// instructions over this (callgrind, go/bench cmd/prof, instructions per Marshal as `any`, default
// sorted keys; see bench/README.md). The sorted keys of the last two such maps are remembered
// (two, the most recent first, cleared by forgetShapes): a map with the same two keys, as a
// document's records have, has its values looked up, without the range, whose start (a random
// offset drawn by the runtime) costs more than two lookups in a map this small: citm_catalog
// 11.54M -> 10.10M instructions with one pair remembered (8,685 of its maps are {"areaId",
// "blockIds"}), 9.79M with two (they alternate with 907 {"areas", "seatCategoryId"} that hold
// them); msgp 10.49M. appendStringMapSmall, which takes every
// size from 2 on, is the fallback TestSmallMapSort checks it against; TestTwoKeyCache checks the
// remembered pair.
func (e *encodeState) appendStringMapTwo(b []byte, m map[string]any) []byte {
	for s := 0; s < e.twoN; s++ {
		// the keys of the last two maps of two pairs, looked up: two lookups cost less than the
		// range's start (its random offset) and steps (see above)
		k0, k1 := e.two[s][0], e.two[s][1]
		if v0, ok := m[k0]; ok {
			if v1, ok := m[k1]; ok {
				if s == 1 { // the most recent first
					e.two[0], e.two[1] = e.two[1], e.two[0]
				}
				b = appendKey(b, k0)
				b = e.appendLeafOrAny(b, v0)
				b = appendKey(b, k1)
				return e.appendLeafOrAny(b, v1)
			}
		}
	}
	var k0, k1 string
	var v0, v1 any
	n := 0
	for k, v := range m {
		if n == 0 {
			k0, v0 = k, v
		} else {
			k1, v1 = k, v
		}
		n++
		if n == 2 {
			break // more would be a map grown under us (a data race): write what fits the header
		}
	}
	if n == 2 {
		if p0, p1 := keyPrefix(k0), keyPrefix(k1); p1 < p0 || p1 == p0 && k1 < k0 {
			k0, v0, k1, v1 = k1, v1, k0, v0
		}
		e.two[1], e.two[0] = e.two[0], [2]string{k0, k1}
		e.twoN = min(e.twoN+1, len(e.two))
	}
	b = appendKey(b, k0)
	b = e.appendLeafOrAny(b, v0)
	if n < 2 {
		return b // the map shrank under us (a data race)
	}
	b = appendKey(b, k1)
	return e.appendLeafOrAny(b, v1)
}

// smallOrder is what appendStringMapSmall sorts for the pair at index i (below 256) with key k:
// the first 7 bytes of k as a big-endian number (zero-padded) above i in the low byte. Two keys
// whose first 7 bytes differ are in the order of these numbers; when they tie (the numbers differ
// in the low byte only) the keys are compared.
func smallOrder(k string, i int) uint64 {
	return keyPrefix(k)&^0xff | uint64(uint8(i))
}

// appendStringMapSorted writes the pairs of m in key order through the pooled pair stack (see
// appendStringMap), for maps of any size.
func (e *encodeState) appendStringMapSorted(b []byte, m map[string]any) []byte {
	allPairs := e.pairs
	start := len(allPairs)
	// A map with the key set of the last sorted map of its length (keyShapes) is written in that
	// order, its values found by lookup, without the range and the sort.
	slot := len(m) & (len(e.shapes) - 1)
	shape := &e.shapes[slot]
	hit := len(m) >= keyShapeMin && len(shape.keys) == len(m)
	if hit && len(m) <= shapeStackMax && e.shapesBusy&(1<<slot) == 0 {
		if out, ok := e.appendByShape(b, m, shape.keys, slot); ok {
			return out
		}
		hit = false
	}
	if !hit && len(m) <= midSortMax {
		var remember *[]string
		if len(m) >= keyShapeMin && e.shapesBusy&(1<<slot) == 0 {
			// remembered before the values are written: a nested map may reuse the entry (not
			// one appendByShape is reading)
			if cap(shape.keys) < len(m) {
				shape.keys = make([]string, 0, len(m))
			}
			remember = &shape.keys
			e.shapesUsed |= 1 << slot
		}
		if out, ok := e.appendStringMapMid(b, m, remember); ok {
			return out
		}
	}
	if hit {
		for _, k := range shape.keys {
			v, ok := m[k]
			if !ok {
				hit = false
				break
			}
			allPairs = append(allPairs, anyPair{k, v})
		}
	}
	if hit {
		e.pairs = allPairs
		for i := start; i < len(allPairs); i++ {
			p := &allPairs[i]
			b = appendStringGrow(b, p.k)
			if cap(b)-len(b) < 16 {
				b = growDouble(b, 16)
			}
			b = e.appendLeafOrAny(b, p.v)
		}
	} else {
		clear(allPairs[start:])
		allPairs = allPairs[:start]
		// gathered in locals, stored back once (each append to e's fields stored e's slice header)
		allOrder := e.order
		ostart := len(allOrder)
		for k, v := range m {
			allOrder = append(allOrder, keyOrder{keyPrefix(k), int32(len(allPairs) - start)})
			allPairs = append(allPairs, anyPair{k, v})
		}
		e.pairs, e.order = allPairs, allOrder
		pairs := allPairs[start:]
		order := allOrder[ostart:]
		sortKeyOrder(order, pairs)
		if len(m) >= keyShapeMin && len(m) <= keyShapeMax && e.shapesBusy&(1<<slot) == 0 {
			// remembered before the values are written: a nested map may reuse the entry (not
			// one appendByShape is reading)
			if cap(shape.keys) < len(m) {
				shape.keys = make([]string, 0, len(m))
			}
			shape.keys = shape.keys[:0]
			for _, o := range order {
				shape.keys = append(shape.keys, pairs[o.i].k)
			}
			e.shapesUsed |= 1 << slot
		}
		for _, o := range order {
			p := &pairs[o.i]
			b = appendStringGrow(b, p.k)
			if cap(b)-len(b) < 16 {
				b = growDouble(b, 16)
			}
			b = e.appendLeafOrAny(b, p.v)
		}
		e.order = e.order[:ostart]
	}
	// keep no reference to the caller's data in the pooled state (in e.pairs' current array:
	// a nested map may have grown it)
	clear(e.pairs[start:])
	e.pairs = e.pairs[:start]
	return b
}

// shapeStackMax: maps of up to this many pairs whose keys are in keyShapes are written by
// appendByShape.
const shapeStackMax = 64

// appendByShape writes m, whose length is len(keys), in the order of keys, a remembered key list
// (keyShapes), and reports false, having written nothing, when m lacks one of them. The values
// are looked up first, into an array on the goroutine's stack, then written with their keys:
// the pooled pair stack took a key and a value per pair (with their write barriers) and was
// cleared after. While the values are written, slot is marked busy so that a nested map does
// not replace the key list being read. Measured (callgrind, go/bench cmd/prof, instructions per
// Marshal of twitter.json as `any`, default sorted keys): see bench/README.md. The pair stack
// path below it in appendStringMapSorted is the fallback (maps over shapeStackMax pairs, or a
// busy slot); TestShapeStackPath checks both give the same bytes.
func (e *encodeState) appendByShape(b []byte, m map[string]any, keys []string, slot int) ([]byte, bool) {
	var vs [shapeStackMax]any
	for i, k := range keys {
		v, ok := m[k]
		if !ok {
			return b, false
		}
		vs[i] = v
	}
	e.shapesBusy |= 1 << slot
	for i, k := range keys {
		b = appendKey(b, k)
		b = e.appendLeafOrAny(b, vs[i])
	}
	e.shapesBusy &^= 1 << slot
	return b, true
}

// keyShapes: the sorted key lists of the maps[string]any one Marshal has sorted, the last one of
// each length (modulo the table's size), so that the next map with the same keys (the records of
// a document: twitter.json's statuses and users) is written in that order by looking its values
// up, with neither the range over the map nor the sort. A map whose length finds another key
// set costs the lookups up to the first missing key (usually one), then takes the sort. The
// lists hold the caller's strings: forgetShapes clears them before the state goes back to the
// pool. Measured (callgrind, go/bench cmd/prof, instructions per Marshal of twitter.json as
// `any`): see bench/README.md.
type keyShapes [64]struct{ keys []string }

// Maps of keyShapeMin to keyShapeMax keys are remembered. Below, the range and the insertion sort
// cost less than a lookup per key, and remembering costs what it saves when no other map has
// the keys (the seed's Product as `any`: 3517 instructions per Marshal, 3776 remembering its map
// of 5 keys).
const (
	keyShapeMin = 12
	keyShapeMax = 256
)

// forgetShapes drops the remembered key lists (and so the caller's strings).
func (e *encodeState) forgetShapes() {
	for used := e.shapesUsed; used != 0; used &= used - 1 {
		sh := &e.shapes[bits.TrailingZeros64(used)]
		clear(sh.keys)
		if cap(sh.keys) > 2*keyShapeMax {
			sh.keys = nil
		}
		sh.keys = sh.keys[:0]
	}
	e.shapesUsed, e.shapesBusy = 0, 0
	e.two, e.twoN = [2][2]string{}, 0
}

// appendStringMapUnsorted appends a map[string]any in Go's iteration order
// (EncodeOptions.UnsortedMapKeys): each pair is written as the range gives it, with no pair
// stack and no sort. Measured against the sorted path on twitter.json as an `any` tree (go/bench,
// same run): the sort and the gathering of pairs were about half of Marshal's time.
//
// A map of two pairs goes through appendStringMapTwo, the sorted path's writer (any order is
// this option's order): its remembered keys look the values up where the last maps of two pairs
// had the same keys, which costs less than the range's start (the random offset). Measured with
// callgrind (go/bench cmd/prof -side mpk-unsorted, GOGC=off, instructions per Marshal, range ->
// appendStringMapTwo): citm_catalog 10.40M -> 9.16M (its 8,685 {"areaId", "blockIds"} maps; the
// sorted default, 1.42x msgp in the last full run, was faster than this option's 1.12x there),
// twitter 3.81M -> 3.79M, rb_twitter 175k -> 171k, js_msgpackr_example4 104.2k -> 104.1k; where
// such maps do not repeat their keys the failed lookups cost a little: rb_geojson 316k -> 321k,
// js_protobufjs_bench 5925 -> 6034 (+1.8%). In CPU time (go/bench cmd/faults, the binaries
// before and after alternating, GOMAXPROCS=1, medians) mpk-unsorted over msgp on citm_catalog
// went from 1.16-1.27x to 1.78-1.84x, with no loss visible on rb_geojson and
// js_protobufjs_bench. TestUnsortedTwoPairMaps.
func (e *encodeState) appendStringMapUnsorted(b []byte, m map[string]any) []byte {
	b = AppendMapHeader(b, uint32(len(m)))
	if !e.enterNested() {
		e.depth--
		return b
	}
	if len(m) == 2 {
		b = e.appendStringMapTwo(b, m)
		e.depth--
		return b
	}
	for k, v := range m {
		b = appendStringGrow(b, k)
		if cap(b)-len(b) < 16 {
			b = growDouble(b, 16)
		}
		b = e.appendLeafOrAny(b, v)
	}
	e.depth--
	return b
}

// sortPairOrder sorts order by the keys of pairs it points at: the portable form of
// sortKeyOrder, which TestSortKeyOrder checks against it.
func sortPairOrder(order []int32, pairs []anyPair) {
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(pairs[a].k, pairs[b].k) })
}

// keyOrder is one pair of a map being sorted: the first 8 bytes of its key as a big-endian
// number (zero-padded) and the pair's index.
type keyOrder struct {
	pre uint64
	i   int32
}

// keyPrefix is the first 8 bytes of k as a big-endian number, zero-padded. Two keys whose
// prefixes differ are in the order of their prefixes; equal prefixes need the whole keys. A key
// of 4 to 7 bytes is read as two overlapping 4-byte words and one of 1 to 3 bytes as its first,
// middle and last bytes, with no loop: measured (callgrind, go/bench cmd/prof, instructions per
// Marshal of citm_catalog.json as `any`, whose maps are small and keyed by short names such as
// "id", "name", "logo"), the byte loop of keyPrefixLoop took 0.87 of the 1.05 million
// instructions keyPrefix cost a Marshal. TestKeyPrefix checks it against keyPrefixLoop.
func keyPrefix(k string) uint64 {
	n := len(k)
	switch {
	case n >= 8:
		return uint64(k[0])<<56 | uint64(k[1])<<48 | uint64(k[2])<<40 | uint64(k[3])<<32 |
			uint64(k[4])<<24 | uint64(k[5])<<16 | uint64(k[6])<<8 | uint64(k[7])
	case n >= 4:
		hi := uint64(k[0])<<24 | uint64(k[1])<<16 | uint64(k[2])<<8 | uint64(k[3])
		t := k[n-4:] // the last 4 bytes, of which the first 8-n are k[n-4:4] again
		lo := uint64(t[0])<<24 | uint64(t[1])<<16 | uint64(t[2])<<8 | uint64(t[3])
		return hi<<32 | (lo<<(8*(8-n)))&0xffffffff
	case n > 0:
		return uint64(k[0])<<56 | uint64(k[n/2])<<(56-8*(n/2)) | uint64(k[n-1])<<(64-8*n)
	}
	return 0
}

// keyPrefixLoop is keyPrefix byte by byte: the portable form TestKeyPrefix checks it against.
func keyPrefixLoop(k string) uint64 {
	var p uint64
	for i := 0; i < len(k) && i < 8; i++ {
		p |= uint64(k[i]) << (56 - 8*i)
	}
	return p
}

// sortKeyOrder sorts order by key, comparing the 8-byte prefixes as numbers and the strings
// only when those are equal, with no call per comparison: a quicksort (median of three, Hoare's
// partition) down to 16 pairs, then insertion sort; a run that goes deeper than twice the log of
// its length finishes by slices.SortFunc, so the worst case stays n log n. Why: sorting the keys
// was most of what Marshal of a map-heavy `any` tree spent over the peers, which do not sort.
// Measured (callgrind, go/bench cmd/prof, instructions per Marshal of twitter.json as `any`):
// slices.SortFunc over the pairs with a strings.Compare closure took about 3 of 8.5 million
// (most maps there have 20 to 40 keys); see bench/README.md for after.
func sortKeyOrder(order []keyOrder, pairs []anyPair) {
	quickSortKeys(order, pairs, 2*bits.Len(uint(len(order))))
}

// keyLess reports whether a's key sorts before b's.
func keyLess(a, b keyOrder, pairs []anyPair) bool {
	return a.pre < b.pre || a.pre == b.pre && pairs[a.i].k < pairs[b.i].k
}

func quickSortKeys(o []keyOrder, pairs []anyPair, budget int) {
	for len(o) > 16 {
		if budget == 0 {
			slices.SortFunc(o, func(a, b keyOrder) int {
				if keyLess(a, b, pairs) {
					return -1
				}
				return 1 // the keys of a map are distinct
			})
			return
		}
		budget--
		n := len(o)
		m := n / 2
		if keyLess(o[m], o[0], pairs) {
			o[m], o[0] = o[0], o[m]
		}
		if keyLess(o[n-1], o[m], pairs) {
			o[n-1], o[m] = o[m], o[n-1]
			if keyLess(o[m], o[0], pairs) {
				o[m], o[0] = o[0], o[m]
			}
		}
		pivot := o[m]
		i, j := -1, n
		for {
			for i++; keyLess(o[i], pivot, pairs); i++ {
			}
			for j--; keyLess(pivot, o[j], pairs); j-- {
			}
			if i >= j {
				break
			}
			o[i], o[j] = o[j], o[i]
		}
		// o[:j+1] sorts before o[j+1:]; recurse into the shorter, loop on the longer
		if j+1 < n-j-1 {
			quickSortKeys(o[:j+1], pairs, budget)
			o = o[j+1:]
		} else {
			quickSortKeys(o[j+1:], pairs, budget)
			o = o[:j+1]
		}
	}
	for i := 1; i < len(o); i++ {
		x := o[i]
		j := i
		for ; j > 0 && keyLess(x, o[j-1], pairs); j-- {
			o[j] = o[j-1]
		}
		o[j] = x
	}
}

// appendKey writes a map key and leaves room for a scalar after it (16 bytes, see appendArray).
// A key of up to 31 bytes with room for it and the scalar is written here, inline in the sorted
// small-map writers, without appendStringGrow's call and the separate room check; anything else
// goes through appendStringGrow, the fallback (TestSmallMapSort has keys on both sides of 31
// bytes). Measured (callgrind, go/bench cmd/prof, instructions per Marshal as `any`, default
// sorted keys): citm_catalog 11.64M -> 11.54M, rb_twitter 221k -> 218k, js_protobufjs_bench 7270
// -> 7166; in appendByShape and appendPairsSorted too, twitter 4.88M -> 4.85M.
func appendKey(b []byte, k string) []byte {
	if len(k) <= 31 && cap(b)-len(b) >= 48 {
		return append(append(b, 0xa0|byte(len(k))), k...)
	}
	b = appendStringGrow(b, k)
	if cap(b)-len(b) < 16 {
		b = growDouble(b, 16)
	}
	return b
}

// appendStringGrow is AppendString with growDouble's growth for long strings.
func appendStringGrow(b []byte, s string) []byte {
	if len(s) <= 31 {
		if cap(b)-len(b) < 32 {
			b = growDouble(b, 32)
		}
		return append(append(b, 0xa0|byte(len(s))), s...)
	}
	b = growDouble(b, len(s)+5)
	return append(AppendStringHeader(b, len(s)), s...)
}

// growDouble makes room for n more bytes in b, at least doubling its capacity when it grows.
// append alone grows a large slice by about 1.25x at a time: Marshal of 1000 strings of 0-4 KiB
// (2 MB) reallocated and copied its buffer about 20 times, four times the output in copies, and
// ran at a quarter of shamaton's speed (which sizes its output first). Doubling bounds the copies
// by the output's size. The append of a make is compiled into one growth of b with only the new
// part cleared.
func growDouble(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	want := max(2*cap(b), len(b)+n)
	return append(b, make([]byte, want-len(b))...)[:len(b)]
}

// anyTreeTypes are the types appendAny writes itself. A codec or ext registered for one of them
// (RegisterCodec, RegisterExt) turns the fast path off for the whole process, so that the
// registered encoder is used wherever such a value is, as RegisterCodec documents.
var anyTreeTypes = map[reflect.Type]bool{
	reflect.TypeFor[string](): true, reflect.TypeFor[int64](): true, reflect.TypeFor[float64](): true,
	reflect.TypeFor[bool](): true, reflect.TypeFor[int](): true, reflect.TypeFor[uint64](): true,
	reflect.TypeFor[[]byte](): true, reflect.TypeFor[[]any](): true, reflect.TypeFor[map[string]any](): true,
}

var anyTreeOverridden atomic.Bool

// noteRegistered is called with every type given a codec or an ext.
func noteRegistered(t reflect.Type) {
	if anyTreeTypes[t] {
		anyTreeOverridden.Store(true)
	}
}

// anyFastPath reports whether appendAny may be used (no codec or ext for its types).
func anyFastPath() bool { return !anyTreeOverridden.Load() }

// isAnyTree reports whether Marshal(v) can go straight to appendAny.
func isAnyTree(v any) bool {
	switch v.(type) {
	case nil, map[string]any, []any, string, int64, float64, bool, int, uint64, []byte:
		return anyFastPath()
	}
	return false
}

// The small-tree path of Marshal: an array of at most smallTreeNodes scalars, strings, bins and
// nested arrays (no maps, at most smallTreeDepth deep), or a lone string or bin, is sized
// exactly and written into one allocation of that size, without the pooled state. Measured
// (callgrind, go/bench cmd/prof, instructions per Marshal): [1,2] took 679 instructions against
// tinylib/msgp's AppendIntf 439, most of the difference the pool's Get and Put and the copy out
// of the scratch buffer; an 8 KiB bin was copied twice (into the scratch buffer, then out).
// After: [1,2] 491 (msgp 441), Test4 2907 (msgp 2779), the 8 KiB bin 2067 (msgp 1816). Writing
// small ones on the stack and copying out took [1,2] to 633: worse, not kept.
//
// The walk that sizes a tree gives up at the node budget, and what it walked is lost: table16
// (16 rows of 3, 65 nodes) spent 3680 of its 9466 instructions there before taking the general
// path. The budget is 16 nodes now, and an array of more than smallTreeTop elements goes to the
// general path without a walk (the pool and the copy out cost a few hundred instructions, a
// walk of 16 nodes about 900).
const (
	smallTreeTop   = 8
	smallTreeNodes = 16
	smallTreeDepth = 8
)

// loneGatherMin: a lone string or bin of at least this many bytes (a Marshal of just that value)
// is written by marshalLone: one bytes.Join of its head and its bytes, an allocation of the
// exact size that is not cleared first and one copy, where the small-tree walk's
// make([]byte, 0, n) clears the result before writing it. (Before, from 256 KiB up, an append to
// the head in a 5-byte array did the same, but that array escaped: one more allocation.)
// Measured with callgrind (go/bench cmd/prof -gc 500: GOGC=off and a collection every 500 ops
// outside the count, so that the ops reuse freed memory, as in a running program, and pay for its
// clearing), instructions per Marshal of test3 (an 8 KiB bin): 3123 -> 1971 (msgp 3084), of
// which the clearing was 1205. With fresh memory (GOGC=off alone) nothing is cleared and the
// join's loops cost about 160 instructions more than the walk, which is about what clearing 1 KiB
// costs: hence the bound. Shorter values keep the small-tree walk (smallTreeSize,
// appendSmallTree), the fallback TestLoneStringMarshal checks this against.
const loneGatherMin = 1024

// marshalSmallTree returns v's encoding, or false when v is not such a small tree.
func marshalSmallTree(v any) ([]byte, bool) {
	switch x := v.(type) {
	case []any:
		if out, ok := marshalFlatArray(x); ok {
			return out, true
		}
		if len(x) > smallTreeTop {
			// (the last element first, here: an array of records or numbers is declined without
			// the call, which cost table16 1% of its instructions)
			if len(x) <= bulkArrayTop && bulkGuess(x[len(x)-1]) != 0 {
				return marshalBulkArray(x)
			}
			return nil, false
		}
		if out, ok := marshalSmallGathered(x); ok {
			return out, true
		}
	case string:
		if len(x) >= loneGatherMin {
			return marshalLone(AppendStringHeader(make([]byte, 0, 5), len(x)), unsafe.Slice(unsafe.StringData(x), len(x))), true
		}
	case []byte:
		if len(x) >= loneGatherMin {
			return marshalLone(AppendBytesHeader(make([]byte, 0, 5), len(x)), x), true
		}
	default:
		return nil, false
	}
	budget := smallTreeNodes
	n, ok := smallTreeSize(v, 0, &budget)
	if !ok {
		return nil, false
	}
	out := appendSmallTree(make([]byte, 0, n), v)
	return out, true
}

// marshalLone is the head and the bytes of a lone string or bin, joined (see loneGatherMin).
func marshalLone(head, p []byte) []byte {
	return bytes.Join([][]byte{head, p}, nil)
}

// bulkArrayTop and bulkArrayAvg: see marshalBulkArray.
const (
	bulkArrayTop = 4096
	bulkArrayAvg = 4096
)

// marshalBulkArray writes an array of more than smallTreeTop elements by a gathered write
// (marshalGathered) when its elements look like long strings and bins of bulkArrayAvg bytes or
// more on average, guessed from three of them (first, middle, last: bulkGuess), so that an array
// of numbers or short strings pays three type switches; otherwise (or when the walk gives up: a
// map inside) it returns false, for the buffered path. Measured with callgrind (go/bench
// cmd/prof, GOGC=off, instructions per Marshal, buffered -> gathered): 100 strings of 100 B to
// 16 KiB (utf8_strings) 201.6k -> 136.4k, 16 bins of 64 KiB (bins64k) 244.1k -> 132.9k. With
// shorter strings the pieces cost more than the copy they save: 1000 strings of 0-4 KiB
// (strings4k, 2 KiB on average) 355k -> 467k, of which bytes.Join 157k (about 80 instructions a
// piece), so those keep the buffered path. A wrong guess costs no more than the buffered path:
// the walk writes the small parts into the scratch buffer, which bytes.Join copies out once, as
// the buffered path does.
func marshalBulkArray(a []any) ([]byte, bool) {
	if len(a) > bulkArrayTop {
		return nil, false
	}
	if bulkGuess(a[0])+bulkGuess(a[len(a)/2])+bulkGuess(a[len(a)-1]) < 3*bulkArrayAvg {
		return marshalSizedArray(a)
	}
	return marshalGathered(a)
}

// marshalSizedArray writes a flat array of strings, bins and scalars (no nested array or map)
// the way shamaton does: one pass to size it, one allocation of that size, one pass to write it.
// It returns false, for the buffered path, at the first element of another kind. The buffered
// path writes the array into the pooled buffer and copies the result out: two passes over every
// byte (the second into fresh memory); here the one extra pass is the allocation's clearing,
// which only writes. Measured in CPU time (getrusage) with the ways alternating in one test
// process, 40 rounds of 20 Marshals, medians, load 5-9 on the shared 2 cores (two runs, both
// orders): 1000 strings of 0-4 KiB (strings4k) 576-812 us buffered -> 449-504 us sized (a bare
// make and copy of the result: 394-407), 1024 strings of 0-1023 bytes (c_strings) 390-552 ->
// 271-352 us (floor 211-334). See go/bench/README.md for the rest of that measurement.
// TestSizedArrayMarshal compares it with the buffered path and with reflection.
func marshalSizedArray(a []any) ([]byte, bool) {
	if !sampledLeaves(a) {
		return nil, false
	}
	n := headLen(len(a), 15)
	for _, x := range a {
		switch x := x.(type) {
		case string:
			n += headLen(len(x), 31) + len(x)
		case []byte:
			if x == nil {
				n++
			} else {
				n += headLen(len(x), -1) + len(x)
			}
		case int64:
			n += intLen(x)
		case float64:
			n += 9
		case nil, bool:
			n++
		case int:
			n += intLen(int64(x))
		case uint64:
			if x > math.MaxInt64 {
				n += 9
			} else {
				n += intLen(int64(x))
			}
		default:
			return nil, false
		}
	}
	out := AppendArrayHeader(make([]byte, 0, n), uint32(len(a)))
	for _, x := range a {
		switch x := x.(type) {
		case string:
			out = AppendString(out, x)
		case []byte:
			if x == nil {
				out = append(out, mNil)
			} else {
				out = AppendBytes(out, x)
			}
		case int64:
			out = AppendInt(out, x)
		case float64:
			out = AppendFloat64(out, x)
		case bool:
			out = AppendBool(out, x)
		case int:
			out = AppendInt(out, int64(x))
		case uint64:
			out = AppendUint(out, x)
		default:
			out = append(out, mNil)
		}
	}
	return out, true
}

// sampledLeaves reports whether 8 elements spread over a (first and last included) are all
// leaves marshalSizedArray takes, so that an array that holds maps or arrays among its strings
// (a JSON array of mixed records) is sent to the buffered path before the sizing pass walks it.
// A container that the samples miss costs the sizing pass up to it: 1000 strings of 100 bytes
// with one map at index 900, 144k -> 168k instructions per Marshal (callgrind).
func sampledLeaves(a []any) bool {
	last := len(a) - 1
	for k := range 8 {
		switch a[k*last/7].(type) {
		case string, []byte, int64, float64, nil, bool, int, uint64:
		default:
			return false
		}
	}
	return true
}

// bulkGuess is the length of a string or bin, else 0: marshalBulkArray's guess of an element's
// size.
func bulkGuess(x any) int {
	switch x := x.(type) {
	case string:
		return len(x)
	case []byte:
		return len(x)
	}
	return 0
}

// marshalFlatArray writes an array of at most 15 int64, float64, bool or nil leaves (no strings,
// no nesting: the shape of Test1 and Test2) in one pass to size it and one to write it, each a
// loop with the type switch written out, rather than smallTreeSize's and appendSmallTree's
// recursive call per element. Measured with callgrind (go/bench cmd/prof, instructions per
// Marshal): see bench/README.md.
func marshalFlatArray(a []any) ([]byte, bool) {
	if len(a) > 15 || a == nil {
		return nil, false
	}
	n := 1
	for _, x := range a {
		switch x := x.(type) {
		case int64:
			n += intLen(x)
		case float64:
			n += 9
		case bool, nil:
			n++
		default:
			return nil, false
		}
	}
	out := make([]byte, 1, n)
	out[0] = 0x90 | byte(len(a))
	for _, x := range a {
		switch x := x.(type) {
		case int64:
			out = AppendInt(out, x)
		case float64:
			out = AppendFloat64(out, x)
		case bool:
			out = AppendBool(out, x)
		case int:
			out = AppendInt(out, int64(x))
		case uint64:
			out = AppendUint(out, x)
		default:
			out = append(out, mNil)
		}
	}
	return out, true
}

// smallTreeSize is the exact size of x's encoding, or false.
func smallTreeSize(x any, depth int, budget *int) (int, bool) {
	*budget--
	if *budget < 0 || depth > smallTreeDepth {
		return 0, false
	}
	switch x := x.(type) {
	case nil, bool:
		return 1, true
	case int64:
		return intLen(x), true
	case int:
		return intLen(int64(x)), true
	case uint64:
		if x > math.MaxInt64 {
			return 9, true
		}
		return intLen(int64(x)), true
	case float64:
		return 9, true
	case string:
		return headLen(len(x), 31) + len(x), true
	case []byte:
		if x == nil {
			return 1, true
		}
		return headLen(len(x), -1) + len(x), true
	case []any:
		if x == nil {
			return 1, true
		}
		n := headLen(len(x), 15)
		for _, e := range x {
			m, ok := smallTreeSize(e, depth+1, budget)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	}
	return 0, false
}

// intLen is the size of AppendInt's encoding of v.
func intLen(v int64) int {
	switch {
	case v >= -32 && v <= 127:
		return 1
	case v >= math.MinInt8 && v <= math.MaxUint8:
		return 2
	case v >= math.MinInt16 && v <= math.MaxUint16:
		return 3
	case v >= math.MinInt32 && v <= math.MaxUint32:
		return 5
	}
	return 9
}

// headLen is the size of the head of a str (fix 31), array (fix 15) or bin (fix -1: none) of n:
// the str8 form is for str and bin only, so an array goes from fix to 16 bits.
func headLen(n, fix int) int {
	switch {
	case n <= fix:
		return 1
	case n <= math.MaxUint8 && fix != 15:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// appendSmallTree writes a tree smallTreeSize accepted.
func appendSmallTree(b []byte, x any) []byte {
	switch x := x.(type) {
	case nil:
		return append(b, mNil)
	case bool:
		return AppendBool(b, x)
	case int64:
		return AppendInt(b, x)
	case int:
		return AppendInt(b, int64(x))
	case uint64:
		return AppendUint(b, x)
	case float64:
		return AppendFloat64(b, x)
	case string:
		return AppendString(b, x)
	case []byte:
		if x == nil {
			return append(b, mNil)
		}
		return AppendBytes(b, x)
	case []any:
		if x == nil {
			return append(b, mNil)
		}
		b = AppendArrayHeader(b, uint32(len(x)))
		for _, e := range x {
			b = appendSmallTree(b, e)
		}
	}
	return b
}
