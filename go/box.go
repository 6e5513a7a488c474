package mpk

import "unsafe"

// Boxes for the leaves of an `any` tree. Putting an int64, a float64 or a string into an
// interface makes Go allocate it a box of its own (8 or 16 bytes; the ints 0 to 255 excepted,
// which point into a static table), so decoding a document into `any` made one allocation per
// number and per string on top of the tree's slices and maps. Here the boxes of one decode are
// slots of a few shared chunks instead, and the interface is made to point at its slot (an
// interface holding a value that is not a pointer is a type and a pointer to the value, which may
// point anywhere in the heap). A slot is written once, before the interface that points at it is
// made, and never again, so the boxed value stays immutable as Go requires.
//
// Measured with the CPU profile of Unmarshal into `any` (go/bench cmd/prof; see bench/README.md):
// mallocgc for these boxes was the largest single item on number-heavy documents (canada, the
// integer arrays) and a large one on twitter and citm_catalog; tinylib/msgp and vmihailenco
// allocate every box alone. boxLeaf below is the portable fallback (Go's own boxing), used when
// the chunk cannot be charged to the allocation budget; TestBoxedLeaves checks both.
//
// Memory: a chunk holds at most boxChunkMax slots and never more than the values the input left
// can hold (one byte each), it is charged to the allocation budget, and one retained number or
// string keeps at most its chunk (2 KiB or 4 KiB) alive, as a retained string keeps its arena
// chunk.

// boxChunkMax is the most slots of a chunk; the first chunk of a decode has boxChunkFirst,
// the second boxChunkMin, and each later one twice the last (see boxChunkLen).
const (
	boxChunkFirst = 8
	boxChunkMin   = 32
	boxChunkMax   = 256
)

// eface is the layout of an `any`: its dynamic type and a pointer to its value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

var (
	boxInt64Type   = typeOfAny(int64(0))
	boxUint64Type  = typeOfAny(uint64(0))
	boxFloat64Type = typeOfAny(float64(0))
	boxStringType  = typeOfAny("")
)

func typeOfAny(x any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&x)).typ }

// makeAny returns the interface of type typ whose value is at p.
func makeAny(typ, p unsafe.Pointer) (x any) {
	e := (*eface)(unsafe.Pointer(&x))
	e.typ, e.data = typ, p
	return x
}

// boxNum returns bits as an `any` of type typ (boxInt64Type, boxUint64Type or boxFloat64Type), its box a
// slot of the decode's number chunk.
func (d *decodeState) boxNum(typ unsafe.Pointer, bits uint64) any {
	if d.numOff == len(d.nums) && !d.newNumChunk() {
		return boxLeaf(typ, bits)
	}
	p := &d.nums[d.numOff]
	d.numOff++
	*p = bits
	return makeAny(typ, unsafe.Pointer(p))
}

// boxInt is boxNum for an int64; the ints 0 to 255 need no box (Go's static table).
func (d *decodeState) boxInt(v int64) any {
	if uint64(v-smallIntMin) < uint64(len(smallInts)) {
		return smallInt(v)
	}
	return d.boxNum(boxInt64Type, uint64(v))
}

// smallInts are the boxes of the ints -128 to 255, the int 8 and uint 8 range (fixints
// included): Go's own boxing has static boxes for 0 to 255 only, behind a call (convT64), and
// allocates one for every negative int. Measured (callgrind, instructions per Unmarshal into
// `any`): [1,2] spent 28 of its 864 in convT64; [-1,-2] allocated a box per element.
const smallIntMin = -128

var smallInts = func() (t [384]int64) {
	for i := range t {
		t[i] = int64(i) + smallIntMin
	}
	return
}()

// smallInt is v, between -128 and 255, as an `any` whose box is its static one.
func smallInt(v int64) any {
	return makeAny(boxInt64Type, unsafe.Pointer(&smallInts[v-smallIntMin]))
}

// boxString returns s as an `any`, its box a slot of the decode's string chunk.
func (d *decodeState) boxString(s string) any {
	if len(s) == 0 {
		return ""
	}
	if d.strOff == len(d.strs) && !d.newStrChunk() {
		return s
	}
	p := &d.strs[d.strOff]
	d.strOff++
	*p = s
	return makeAny(boxStringType, unsafe.Pointer(p))
}

// boxLeaf is Go's own boxing of a number: the fallback of boxNum.
func boxLeaf(typ unsafe.Pointer, bits uint64) any {
	switch typ {
	case boxInt64Type:
		return int64(bits)
	case boxUint64Type:
		return bits
	}
	return *(*float64)(unsafe.Pointer(&bits))
}

// boxChunkLen is the size of the next chunk after one of last slots: boxChunkFirst for the
// first, then twice the last within [boxChunkMin, boxChunkMax], and never more than the values
// the rest of the input can hold. A small first chunk, then a jump to 32: a document with a
// few boxed values (rb_image: 3 strings and 3 numbers beside a 6 KiB bin) took 16-slot chunks
// of 256 and 128 bytes, and allocated 12% more bytes than msgp; chunks of 8, 32, 64, ... cost a
// document with many values no more allocations than 16, 32, 64, ... did. Measured B/op in
// go/bench/README.md ("Final: Unmarshal cells below the bar").
func (d *decodeState) boxChunkLen(last int) int {
	n := boxChunkFirst
	if last > 0 {
		n = min(max(2*last, boxChunkMin), boxChunkMax)
	}
	return min(n, len(d.data)-d.off+1)
}

func (d *decodeState) newNumChunk() bool {
	n := d.boxChunkLen(len(d.nums))
	if d.charge(uint64(8*n), d.lastHead) != nil {
		return false
	}
	d.nums, d.numOff = make([]uint64, n), 0
	return true
}

func (d *decodeState) newStrChunk() bool {
	n := d.boxChunkLen(len(d.strs))
	if d.charge(uint64(16*n), d.lastHead) != nil {
		return false
	}
	d.strs, d.strOff = make([]string, n), 0
	return true
}

// arrayBox is a small []any's elements and the box of its slice header in one allocation.
type arrayBox[E any] struct {
	hdr []any
	e   E
}

var boxAnySliceType = typeOfAny([]any(nil))

// newAnyArray returns a new []any of n elements and the same slice as an `any`. Returning a
// []any as an `any` boxes its slice header, an allocation of its own besides the elements; an
// array of up to 16 elements gets both in one allocation here (an arrayBox, whose elements are
// rounded up to 2, 4, 8 or 16: at most 24 bytes and twice the elements' room more than the two
// allocations). Measured: canada.json is 111k arrays of two floats, GeoJSON and 3D models the
// same; [1,2] took two allocations besides the caller's `any`, as tinylib/msgp's two.
// TestNewAnyArray checks it against make.
func newAnyArray(n int) (any, []any) {
	switch {
	case n == 0:
		if sharedEmptyArray {
			return emptyAnyArray, nil
		}
	case n <= 2:
		return boxedArray[[2]any](n)
	case n <= 4:
		return boxedArray[[4]any](n)
	case n <= 8:
		return boxedArray[[8]any](n)
	case n <= 16:
		return boxedArray[[16]any](n)
	}
	a := make([]any, n)
	return a, a
}

// emptyAnyArray is the `any` of every empty array decoded into `any`: a []any of length and
// capacity 0, not nil. A fresh one is a make([]any, 0), which allocates nothing, boxed in an
// `any`, which allocates its slice header (24 bytes); one shared box serves them all, since
// nothing can be written through a slice of capacity 0 (an append makes a new array) and the
// box itself is never written. Measured (callgrind, go/bench cmd/prof, instructions per
// Unmarshal into `any`): citm_catalog.json has 8,695 empty arrays (its areas' "blockIds"), each
// one such allocation; figures in go/bench/README.md. sharedEmptyArray off is the fallback, a
// box of its own (TestEmptyArrayShared runs both).
var emptyAnyArray any = make([]any, 0)

// sharedEmptyArray selects emptyAnyArray; tests turn it off to run the fallback.
var sharedEmptyArray = true

// anyArrayBytes is what newAnyArray(n) allocates, for the allocation budget.
func anyArrayBytes(n uint64) uint64 {
	switch {
	case n == 0:
		return 0
	case n <= 2:
		return 24 + 2*16
	case n <= 4:
		return 24 + 4*16
	case n <= 8:
		return 24 + 8*16
	case n <= 16:
		return 24 + 16*16
	}
	return 16 * n
}

func boxedArray[E any](n int) (any, []any) {
	p := new(arrayBox[E])
	p.hdr = unsafe.Slice((*any)(unsafe.Pointer(&p.e)), n)
	return makeAny(boxAnySliceType, unsafe.Pointer(&p.hdr)), p.hdr
}
