package mpk

import (
	"math"
	"reflect"
	"strconv"
	"sync"
	"unsafe"
)

// Helpers for code written by mpkgen. They are ordinary API too: each reads one value like the
// other Read functions and returns the rest of b.

// ReadInt8 reads an int that fits in an int8.
func ReadInt8(b []byte) (int8, []byte, error) {
	v, rest, err := readIntRange(b, math.MinInt8, math.MaxInt8, "int8")
	return int8(v), rest, err
}

// ReadInt16 reads an int that fits in an int16.
func ReadInt16(b []byte) (int16, []byte, error) {
	v, rest, err := readIntRange(b, math.MinInt16, math.MaxInt16, "int16")
	return int16(v), rest, err
}

// ReadInt32 reads an int that fits in an int32.
func ReadInt32(b []byte) (int32, []byte, error) {
	v, rest, err := readIntRange(b, math.MinInt32, math.MaxInt32, "int32")
	return int32(v), rest, err
}

// ReadUint8 reads an int that fits in a uint8.
func ReadUint8(b []byte) (uint8, []byte, error) {
	v, rest, err := readIntRange(b, 0, math.MaxUint8, "uint8")
	return uint8(v), rest, err
}

// ReadUint16 reads an int that fits in a uint16.
func ReadUint16(b []byte) (uint16, []byte, error) {
	v, rest, err := readIntRange(b, 0, math.MaxUint16, "uint16")
	return uint16(v), rest, err
}

// ReadUint32 reads an int that fits in a uint32.
func ReadUint32(b []byte) (uint32, []byte, error) {
	v, rest, err := readIntRange(b, 0, math.MaxUint32, "uint32")
	return uint32(v), rest, err
}

func readIntRange(b []byte, lo, hi int64, name string) (int64, []byte, error) {
	if neg, n, size, ok := readIntFast(b); ok {
		if v := int64(n); (neg && v >= lo) || (!neg && n <= uint64(hi)) {
			return v, b[size:], nil
		}
	}
	v, rest, err := ReadInt(b)
	if err != nil {
		if te, ok := err.(*UnmarshalTypeError); ok {
			te.Type = intTypes[name]
		}
		return 0, b, err
	}
	if v < lo || v > hi {
		return 0, b, &UnmarshalTypeError{Value: "int " + strconv.FormatInt(v, 10), Type: intTypes[name]}
	}
	return v, rest, nil
}

// ShiftOffset returns err with its Offset moved by n bytes, for an error a Read function
// reported on b[n:]; other errors come back unchanged.
func ShiftOffset(err error, n int) error {
	switch e := err.(type) {
	case *DecodeError:
		c := *e
		c.Offset += int64(n)
		return &c
	case *UnmarshalTypeError:
		c := *e
		c.Offset += int64(n)
		return &c
	case *refusalError:
		c := *e
		c.Offset += int64(n)
		return &c
	}
	return err
}

// MarshalAppend appends the encoding of v to b, as Marshal does; generated code uses it for
// fields of types it does not handle itself.
func MarshalAppend(b []byte, v any) ([]byte, error) {
	e := encodeStatePool.Get().(*encodeState)
	saved := e.buf
	e.buf, e.err, e.flags, e.depth = b, nil, 0, 0
	e.encode(v)
	out, err := e.buf, e.err
	e.buf = saved[:0]
	encodeStatePool.Put(e)
	return out, err
}

// UnmarshalPrefix decodes the value at the start of b into v, as Unmarshal does, and returns the
// rest of b.
func UnmarshalPrefix(b []byte, v any) ([]byte, error) {
	return UnmarshalPrefixNested(b, v, 0)
}

// The Nested functions are for generated code, which reads a message piece by piece: depth is the
// number of containers enclosing the value at the start of b (0 at the top), so that the value's
// own containers count from depth+1 and the default depth limit falls on the same head, with the
// same kind and offset, as it does for Unmarshal on the whole message.

// UnmarshalPrefixNested is UnmarshalPrefix for a value enclosed by depth containers; generated
// code uses it for fields of types it does not handle itself.
func UnmarshalPrefixNested(b []byte, v any, depth int) ([]byte, error) {
	rest, err := SkipNested(b, depth)
	if err != nil {
		return b, err
	}
	d := getDecodeState(b[:len(b)-len(rest)], &defaultLimits, false, 0)
	d.depth, d.startDepth = depth, depth
	err = d.unmarshal(v)
	putDecodeState(d)
	if err != nil {
		return b, err
	}
	return rest, nil
}

// SkipNested is Skip for a value enclosed by depth containers.
func SkipNested(b []byte, depth int) ([]byte, error) {
	r := newReader(b, &defaultLimits)
	r.depth = depth
	if err := r.skip(); err != nil {
		return b, err
	}
	return b[r.off:], nil
}

// ReadArrayHeaderNested is ReadArrayHeader for an array enclosed by depth containers: at the
// depth limit its head is a DepthLimit error.
func ReadArrayHeaderNested(b []byte, depth int) (n int, rest []byte, err error) {
	if len(b) > 0 && depth < DefaultDepthLimit {
		if c := b[0]; c&0xf0 == 0x90 {
			if n = int(c & 0x0f); n < len(b) {
				return n, b[1:], nil
			}
		} else if c == mArray16 && len(b) >= 3 {
			if n = int(b[1])<<8 | int(b[2]); n <= len(b)-3 {
				return n, b[3:], nil
			}
		}
	}
	return readHeaderNested(b, depth, ArrayType)
}

// ReadMapHeaderNested is ReadMapHeader for a map enclosed by depth containers: at the depth limit
// its head is a DepthLimit error.
func ReadMapHeaderNested(b []byte, depth int) (n int, rest []byte, err error) {
	if len(b) > 0 && b[0]&0xf0 == 0x80 && depth < DefaultDepthLimit {
		if n = int(b[0] & 0x0f); 2*n < len(b) {
			return n, b[1:], nil
		}
	}
	return readHeaderNested(b, depth, MapType)
}

// readHeaderNested reads a container head through the checked path, which checks the depth after
// the count's limit and before the count's fit, in spec/README.md's order.
func readHeaderNested(b []byte, depth int, want Type) (int, []byte, error) {
	r := newReader(b, &defaultLimits)
	r.depth = depth
	t, err := r.head()
	if err != nil {
		return 0, b, err
	}
	if t.t != want {
		if want == ArrayType {
			return 0, b, typeError(t, reflect.TypeFor[[]any](), 0)
		}
		return 0, b, typeError(t, reflect.TypeFor[map[string]any](), 0)
	}
	return int(t.n), b[r.off:], nil
}

// A StringArena gives the strings read by one generated UnmarshalMsg call a shared backing
// array: one allocation for all the short strings of a message instead of one each. The array is
// a copy of the input from the first string on (4 KiB of it at most, or the string's own size),
// made in one go, so a later string that falls inside it is a view of the copy and costs no copy
// of its own. A string keeps at most its chunk alive. The zero value is ready.
//
// It also carries what bounds the memory a generated UnmarshalMsg allocates, once Begin has
// been called with the input's length: the allocation budget (DefaultAllocBudget) and the floor
// of bytes the open containers still owe, so that declared counts are checked across all open
// containers as Unmarshal checks them (see the README's Limits section).
type StringArena struct {
	chunk []byte // a copy of input bytes
	// src and end are the addresses of the input byte that chunk[0] copies and of the end of
	// that input. Addresses rather than pointers, so that the input does not escape to the heap.
	src, end uintptr

	total  int   // the whole input's length (0: Begin was not called, nothing is bounded)
	floor  int   // a lower bound on total that the open containers' owed elements need
	budget int64 // bytes left to allocate
}

// Begin starts the decode of one value from an input of n bytes (UnmarshalMsg's b).
func (a *StringArena) Begin(n int) {
	a.total, a.floor, a.budget = n, 0, DefaultAllocBudget(n)
}

// refusalError is an allocation refused by a StringArena: a container whose count the input
// cannot hold together with what the open containers owe, or one over the budget. Its Offset is
// shifted like a DecodeError's on the way up; FinishUnmarshal turns it into the input's first
// error, as Unmarshal's refuse does.
type refusalError struct{ DecodeError }

// ReadArrayHeaderIn is ReadArrayHeaderNested for an array whose n elements of elemSize bytes
// are about to be allocated (elemSize 0: nothing is). It returns the floor to restore with Leave
// once the array's elements are read.
func (a *StringArena) ReadArrayHeaderIn(b []byte, depth, elemSize int) (n, floor int, rest []byte, err error) {
	n, rest, err = ReadArrayHeaderNested(b, depth)
	if err != nil {
		return 0, a.floor, b, err
	}
	floor, err = a.enter(b, rest, uint64(n), uint64(n)*uint64(elemSize))
	if err != nil {
		return 0, floor, b, err
	}
	return n, floor, rest, nil
}

// ReadMapHeaderIn is ReadMapHeaderNested for a map whose pairs take pairSize bytes each (0 for a
// struct's map, which allocates nothing); at most maxMapPresize pairs are charged, the room a
// generated map is made with.
func (a *StringArena) ReadMapHeaderIn(b []byte, depth, pairSize int) (n, floor int, rest []byte, err error) {
	n, rest, err = ReadMapHeaderNested(b, depth)
	if err != nil {
		return 0, a.floor, b, err
	}
	floor, err = a.enter(b, rest, 2*uint64(n), uint64(min(n, maxMapPresize))*uint64(pairSize))
	if err != nil {
		return 0, floor, b, err
	}
	return n, floor, rest, nil
}

// enter checks a container head read from b (rest follows it) owing need elements, and charges
// size bytes to the budget.
func (a *StringArena) enter(b, rest []byte, need, size uint64) (int, error) {
	saved := a.floor
	if a.total == 0 {
		return saved, nil
	}
	hdr := len(b) - len(rest)
	open := max(a.floor+hdr+int(need)-1, a.total-len(b)+hdr+int(need))
	if open > a.total {
		return saved, &refusalError{DecodeError{Kind: Truncated}}
	}
	if size > 0 {
		if size > uint64(a.budget) {
			return saved, &refusalError{DecodeError{Kind: LengthLimit}}
		}
		a.budget -= int64(size)
	}
	a.floor = open
	return saved, nil
}

// Leave restores the floor ReadArrayHeaderIn or ReadMapHeaderIn returned, after the container's
// elements.
func (a *StringArena) Leave(floor int) { a.floor = floor }

// Alloc charges size bytes (a pointer's target) to the budget; b is where the value starts.
func (a *StringArena) Alloc(size int) error {
	if a.total == 0 {
		return nil
	}
	if int64(size) > a.budget {
		return &refusalError{DecodeError{Kind: LengthLimit}}
	}
	a.budget -= int64(size)
	return nil
}

// FinishUnmarshal is the error a generated UnmarshalMsg returns for err, an error of the decode
// of b: an allocation the StringArena refused becomes the first error of b's value in the
// spec's order (found by Skip, which allocates nothing), or the refusal itself when b's value is
// well-formed (a LengthLimit over the budget).
func FinishUnmarshal(b []byte, err error) error {
	if r, ok := err.(*refusalError); ok {
		if _, serr := Skip(b); serr != nil {
			return serr
		}
		de := r.DecodeError
		return &de
	}
	return err
}

// ReadString reads a str like ReadString, into a string that does not share memory with b. A
// fixstr or str 8 inside the current chunk takes no further call.
func (a *StringArena) ReadString(b []byte) (string, []byte, error) {
	var n, h int
	switch {
	case len(b) > 0 && b[0]&0xe0 == 0xa0:
		n, h = int(b[0]&0x1f), 1
	case len(b) > 1 && b[0] == mStr8:
		n, h = int(b[1]), 2
	default:
		return a.readString(b)
	}
	end := h + n
	if end > len(b) || n == 0 {
		return a.readString(b)
	}
	if s, ok := a.view(b, h, n); ok {
		return s, b[end:], nil
	}
	return a.readString(b)
}

// view returns b[h:h+n] from the chunk when the chunk holds those bytes of the input: b must end
// where the chunk's input ended (a slice of another buffer does not, nor the input after its
// goroutine's stack moved), and b[h:h+n] must lie inside the copied range.
func (a *StringArena) view(b []byte, h, n int) (string, bool) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	pos := uint(p-a.src) + uint(h) // before src: wraps around to a huge value
	if p+uintptr(len(b)) != a.end || pos >= uint(len(a.chunk)) || uint(n) > uint(len(a.chunk))-pos {
		return "", false
	}
	return unsafe.String(&a.chunk[pos], n), true
}

// readString is ReadString's general case: any str head, a new chunk, or an error.
func (a *StringArena) readString(b []byte) (string, []byte, error) {
	s, rest, err := ReadStringBytes(b)
	if err != nil || len(s) == 0 {
		return "", rest, err
	}
	start := len(b) - len(rest) - len(s)
	if v, ok := a.view(b, start, len(s)); ok {
		return v, rest, nil
	}
	// The new chunk copies what is left of the input from this string on, up to the chunk
	// size: every later string of a short message is then in it.
	size := max(min(len(b)-start, arenaChunk), len(s))
	a.chunk = append([]byte(nil), b[start:start+size]...)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	a.src, a.end = p+uintptr(start), p+uintptr(len(b))
	return unsafe.String(&a.chunk[0], len(s)), rest, nil
}

// Grow returns b with room for n more bytes, allocating exactly that room when it must; generated
// MarshalMsg methods call it once with their Msgsize.
func Grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	return growExact(b, n)
}

func growExact(b []byte, n int) []byte {
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}

// The Size functions give the exact encoded size of a value, for Msgsize methods.

// IntSize is the size of v written by AppendInt.
func IntSize(v int64) int {
	if v >= 0 {
		return UintSize(uint64(v))
	}
	switch {
	case v >= -32:
		return 1
	case v >= math.MinInt8:
		return 2
	case v >= math.MinInt16:
		return 3
	case v >= math.MinInt32:
		return 5
	}
	return 9
}

// UintSize is the size of v written by AppendUint.
func UintSize(v uint64) int {
	switch {
	case v <= 0x7f:
		return 1
	case v <= math.MaxUint8:
		return 2
	case v <= math.MaxUint16:
		return 3
	case v <= math.MaxUint32:
		return 5
	}
	return 9
}

// StringSize is the size of a str of n bytes, head included.
func StringSize(n int) int {
	switch {
	case n <= 31:
		return 1 + n
	case n <= math.MaxUint8:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	}
	return 5 + n
}

// BytesSize is the size of a bin of n bytes, head included.
func BytesSize(n int) int {
	switch {
	case n <= math.MaxUint8:
		return 2 + n
	case n <= math.MaxUint16:
		return 3 + n
	}
	return 5 + n
}

// HeaderSize is the size of an array or map head for n elements or pairs.
func HeaderSize(n int) int {
	switch {
	case n <= 15:
		return 1
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// A Scratch is the buffer a generated MarshalMsg(nil) writes into when sizing the value first
// would cost more than copying its encoding: the value is appended to warm memory reused from
// call to call, without a sizing pass, and Done copies the encoding out into one allocation of
// its exact length. (make and copy measured 3-10% faster here than append([]byte(nil), o...),
// which skips clearing: on this machine the first writes to new memory cost the same either way,
// and make clears it in wider stores.) A Scratch serves one call at a time.
type Scratch struct{ buf []byte }

const (
	// firstScratch is a new Scratch's capacity: most messages then never grow it.
	firstScratch = 4 << 10
	// maxScratch bounds the buffer a Scratch keeps between calls: an encoding that outgrows
	// it is returned as it is, in the buffer its appends grew, and not kept.
	maxScratch = 64 << 10
)

var scratchPool = sync.Pool{New: func() any { return &Scratch{buf: make([]byte, 0, firstScratch)} }}

// GetScratch returns a Scratch from the pool, for one MarshalMsg call.
func GetScratch() *Scratch { return scratchPool.Get().(*Scratch) }

// Bytes returns the empty buffer to append the encoding to.
func (s *Scratch) Bytes() []byte { return s.buf[:0] }

// Done returns the encoding o, appended to Bytes() by the caller, in a slice of its own, or nil
// and err when err is not nil, and puts s back into the pool; s must not be used afterwards.
func (s *Scratch) Done(o []byte, err error) ([]byte, error) {
	if err != nil {
		scratchPool.Put(s)
		return nil, err
	}
	if cap(o) > maxScratch {
		// Too large to keep: o's buffer was grown by append past the scratch, so nothing
		// else holds it and it is handed over as it is.
		scratchPool.Put(s)
		return o, nil
	}
	out := make([]byte, len(o))
	copy(out, o)
	if cap(o) > cap(s.buf) {
		s.buf = o[:0]
	}
	scratchPool.Put(s)
	return out, nil
}

// OmitField reports whether the field p points to is left out under omitempty / omitzero, by
// the rules Marshal applies; generated code calls it where the rule is not a plain comparison.
func OmitField(p any, omitEmpty, omitZero bool) bool {
	return omitted(&field{omitEmpty: omitEmpty, omitZero: omitZero}, reflect.ValueOf(p).Elem())
}
