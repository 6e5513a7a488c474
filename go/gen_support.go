package mpk

import (
	"math"
	"reflect"
	"strconv"

	"mpk.dev/go/mpk/internal/bridge"
)

// Read functions for the narrower int types (generated code uses them too): each reads one value
// like the other Read functions and returns the rest of b.

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

// MarshalAppend appends the encoding of v to b, as Marshal does; generated code uses it for
// fields of types it does not handle itself.
func MarshalAppend(b []byte, v any) ([]byte, error) {
	e := encodeStatePool.Get().(*encodeState)
	saved := e.buf
	e.buf, e.err, e.flags, e.depth = b, nil, 0, 0
	e.encode(v)
	out, err := e.buf, e.err
	e.buf = saved[:0]
	e.forgetShapes()
	encodeStatePool.Put(e)
	return out, err
}

// UnmarshalPrefix decodes the value at the start of b into v, as Unmarshal does, and returns the
// rest of b.
func UnmarshalPrefix(b []byte, v any) ([]byte, error) {
	return unmarshalPrefixNested(b, v, 0)
}

// The nested reads are for generated code (package genrt, through internal/bridge): depth is the
// number of containers enclosing the value at the start of b (0 at the top), so that the value's
// own containers count from depth+1 and the default depth limit falls on the same head, with the
// same kind and offset, as it does for Unmarshal on the whole message.

func init() {
	bridge.SkipNested = skipNested
	bridge.ReadHeaderNested = readHeaderNested
	bridge.UnmarshalPrefixNested = func(b []byte, v any, depth int, budget int64) ([]byte, int64, error) {
		return unmarshalPrefixBudget(b, v, depth, budget)
	}
	bridge.OmitField = func(p any, omitEmpty, omitZero bool) bool {
		return omitted(&field{omitEmpty: omitEmpty, omitZero: omitZero}, reflect.ValueOf(p).Elem())
	}
}

func unmarshalPrefixNested(b []byte, v any, depth int) ([]byte, error) {
	rest, _, err := unmarshalPrefixBudget(b, v, depth, -1)
	return rest, err
}

// unmarshalPrefixBudget decodes the value at the start of b, enclosed by depth containers,
// allocating at most budget bytes (-1: the default budget for the value); it returns what is
// left of the budget, so that the fields generated code hands to reflection share its budget.
func unmarshalPrefixBudget(b []byte, v any, depth int, budget int64) ([]byte, int64, error) {
	rest, err := skipNested(b, depth)
	if err != nil {
		return b, budget, err
	}
	d := getDecodeState(b[:len(b)-len(rest)], &defaultLimits, false, 0)
	d.depth, d.startDepth = depth, depth
	if budget >= 0 {
		d.maxAlloc = budget
	}
	err = d.unmarshal(v)
	left := max(d.maxAlloc-d.allocated, 0)
	putDecodeState(d)
	if err != nil {
		return b, left, err
	}
	return rest, left, nil
}

func skipNested(b []byte, depth int) ([]byte, error) {
	r := newReader(b, &defaultLimits)
	r.depth = depth
	if err := r.skip(); err != nil {
		return b, err
	}
	return b[r.off:], nil
}

// readHeaderNested reads an array (or a map) head through the checked path, which checks the
// depth after the count's limit and before the count's fit, in spec/README.md's order.
func readHeaderNested(b []byte, depth int, array bool) (int, []byte, error) {
	r := newReader(b, &defaultLimits)
	r.depth = depth
	t, err := r.head()
	if err != nil {
		return 0, b, err
	}
	want := MapType
	if array {
		want = ArrayType
	}
	if t.t != want {
		if want == ArrayType {
			return 0, b, typeError(t, reflect.TypeFor[[]any](), 0)
		}
		return 0, b, typeError(t, reflect.TypeFor[map[string]any](), 0)
	}
	return int(t.n), b[r.off:], nil
}

// shiftOffset returns err with its Offset moved by n bytes.
func shiftOffset(err error, n int) error {
	switch e := err.(type) {
	case *DecodeError:
		c := *e
		c.Offset += int64(n)
		return &c
	case *UnmarshalTypeError:
		c := *e
		c.Offset += int64(n)
		return &c
	}
	return err
}
