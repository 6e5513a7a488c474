package mpk

import (
	"encoding/binary"
	"math"
	"reflect"
	"strconv"
	"time"
)

// The Read functions decode one value at the start of b and return it with the rest of b after
// it. They allocate nothing: ReadStringBytes, ReadBytes and ReadExt return sub-slices of b. Each
// value is checked as spec/README.md says, with the default limits, and a declared length is
// checked against the bytes present. On error the rest is b unchanged, and a *DecodeError or
// *UnmarshalTypeError carries the offset relative to b.

var defaultLimits = DefaultLimits()

var (
	int64Type   = reflect.TypeFor[int64]()
	uint64Type  = reflect.TypeFor[uint64]()
	float64Type = reflect.TypeFor[float64]()
	float32Type = reflect.TypeFor[float32]()
	boolType    = reflect.TypeFor[bool]()
	stringType  = reflect.TypeFor[string]()
	bytesType   = reflect.TypeFor[[]byte]()
	timeType    = reflect.TypeFor[time.Time]()
	extType     = reflect.TypeFor[Ext]()
)

var intTypes = map[string]reflect.Type{
	"int8": reflect.TypeFor[int8](), "int16": reflect.TypeFor[int16](), "int32": reflect.TypeFor[int32](),
	"uint8": reflect.TypeFor[uint8](), "uint16": reflect.TypeFor[uint16](), "uint32": reflect.TypeFor[uint32](),
}

// describe names a token for error messages: "str", "int 300", ...
func (t tok) describe() string {
	switch t.t {
	case IntType:
		if t.neg {
			return "int " + strconv.FormatInt(int64(t.n), 10)
		}
		return "int " + strconv.FormatUint(t.n, 10)
	case ExtType:
		return "ext " + strconv.Itoa(int(t.ext))
	}
	return t.t.String()
}

func typeError(t tok, want reflect.Type, at int64) error {
	return &UnmarshalTypeError{Value: t.describe(), Type: want, Offset: at}
}

// readOne parses the head of the value at the start of b with the default limits.
func readOne(b []byte) (tok, reader, error) {
	r := newReader(b, &defaultLimits)
	t, err := r.head()
	return t, r, err
}

// ReadNil reads a nil.
func ReadNil(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == mNil {
		return b[1:], nil
	}
	t, _, err := readOne(b)
	if err != nil {
		return b, err
	}
	return b, typeError(t, reflect.TypeFor[any](), 0)
}

// ReadBool reads a bool.
func ReadBool(b []byte) (bool, []byte, error) {
	if len(b) > 0 && (b[0] == mTrue || b[0] == mFalse) {
		return b[0] == mTrue, b[1:], nil
	}
	t, _, err := readOne(b)
	if err != nil {
		return false, b, err
	}
	return false, b, typeError(t, boolType, 0)
}

// readIntFast reads an int head and its field when they are present; ok is false otherwise (not
// an int, or cut off), and the caller takes the checked path.
func readIntFast(b []byte) (neg bool, n uint64, size int, ok bool) {
	if len(b) == 0 {
		return false, 0, 0, false
	}
	switch c := b[0]; {
	case c <= 0x7f:
		return false, uint64(c), 1, true
	case c >= 0xe0:
		return true, uint64(int64(int8(c))), 1, true
	case c == mUint8 && len(b) >= 2:
		return false, uint64(b[1]), 2, true
	case c == mUint16 && len(b) >= 3:
		return false, uint64(binary.BigEndian.Uint16(b[1:])), 3, true
	case c == mUint32 && len(b) >= 5:
		return false, uint64(binary.BigEndian.Uint32(b[1:])), 5, true
	case c == mUint64 && len(b) >= 9:
		return false, binary.BigEndian.Uint64(b[1:]), 9, true
	case c == mInt8 && len(b) >= 2:
		v := int64(int8(b[1]))
		return v < 0, uint64(v), 2, true
	case c == mInt16 && len(b) >= 3:
		v := int64(int16(binary.BigEndian.Uint16(b[1:])))
		return v < 0, uint64(v), 3, true
	case c == mInt32 && len(b) >= 5:
		v := int64(int32(binary.BigEndian.Uint32(b[1:])))
		return v < 0, uint64(v), 5, true
	case c == mInt64 && len(b) >= 9:
		v := int64(binary.BigEndian.Uint64(b[1:]))
		return v < 0, uint64(v), 9, true
	}
	return false, 0, 0, false
}

// ReadInt reads an int of any width whose value fits in an int64.
func ReadInt(b []byte) (int64, []byte, error) {
	// Every int head is decoded here, without a further call; only errors take readInt.
	if len(b) > 0 {
		switch c := b[0]; {
		case c <= 0x7f:
			return int64(c), b[1:], nil
		case c >= 0xe0:
			return int64(int8(c)), b[1:], nil
		case c == mUint8 && len(b) >= 2:
			return int64(b[1]), b[2:], nil
		case c == mUint16 && len(b) >= 3:
			return int64(binary.BigEndian.Uint16(b[1:])), b[3:], nil
		case c == mUint32 && len(b) >= 5:
			return int64(binary.BigEndian.Uint32(b[1:])), b[5:], nil
		case c == mUint64 && len(b) >= 9:
			if v := binary.BigEndian.Uint64(b[1:]); v <= math.MaxInt64 {
				return int64(v), b[9:], nil
			}
		case c == mInt8 && len(b) >= 2:
			return int64(int8(b[1])), b[2:], nil
		case c == mInt16 && len(b) >= 3:
			return int64(int16(binary.BigEndian.Uint16(b[1:]))), b[3:], nil
		case c == mInt32 && len(b) >= 5:
			return int64(int32(binary.BigEndian.Uint32(b[1:]))), b[5:], nil
		case c == mInt64 && len(b) >= 9:
			return int64(binary.BigEndian.Uint64(b[1:])), b[9:], nil
		}
	}
	return readInt(b)
}

// readInt is ReadInt's checked path: a type error or a malformed head.
func readInt(b []byte) (int64, []byte, error) {
	t, r, err := readOne(b)
	if err != nil {
		return 0, b, err
	}
	if t.t != IntType || (!t.neg && t.n > math.MaxInt64) {
		return 0, b, typeError(t, int64Type, 0)
	}
	return int64(t.n), b[r.off:], nil
}

// ReadUint reads a non-negative int of any width.
func ReadUint(b []byte) (uint64, []byte, error) {
	if neg, n, size, ok := readIntFast(b); ok && !neg {
		return n, b[size:], nil
	}
	return readUint(b)
}

// readUint is ReadUint's checked path: a type error or a malformed head.
func readUint(b []byte) (uint64, []byte, error) {
	t, r, err := readOne(b)
	if err != nil {
		return 0, b, err
	}
	if t.t != IntType || t.neg {
		return 0, b, typeError(t, uint64Type, 0)
	}
	return t.n, b[r.off:], nil
}

// ReadFloat64 reads a float 64, a float 32 (widened exactly) or an int (converted).
func ReadFloat64(b []byte) (float64, []byte, error) {
	t, r, err := readOne(b)
	if err != nil {
		return 0, b, err
	}
	switch t.t {
	case Float64Type:
		return math.Float64frombits(t.n), b[r.off:], nil
	case Float32Type:
		return float64(math.Float32frombits(uint32(t.n))), b[r.off:], nil
	case IntType:
		if t.neg {
			return float64(int64(t.n)), b[r.off:], nil
		}
		return float64(t.n), b[r.off:], nil
	}
	return 0, b, typeError(t, float64Type, 0)
}

// ReadFloat32 reads a float 32, a float 64 that a float32 holds exactly (or a NaN), or an int
// (converted), as Unmarshal into a float32 does.
func ReadFloat32(b []byte) (float32, []byte, error) {
	if len(b) >= 5 && b[0] == mFloat32 {
		return math.Float32frombits(uint32(b[1])<<24 | uint32(b[2])<<16 | uint32(b[3])<<8 | uint32(b[4])), b[5:], nil
	}
	f, rest, err := ReadFloat64(b)
	if err != nil {
		if te, ok := err.(*UnmarshalTypeError); ok {
			te.Type = float32Type
		}
		return 0, b, err
	}
	if len(b) > 0 && b[0] == mFloat64 && float64(float32(f)) != f && !math.IsNaN(f) {
		return 0, b, &UnmarshalTypeError{Value: "float64", Type: float32Type}
	}
	return float32(f), rest, nil
}

// ReadStringBytes reads a str and returns its bytes as a sub-slice of b (no copy, no UTF-8 check).
func ReadStringBytes(b []byte) (s, rest []byte, err error) {
	if len(b) > 0 {
		c := b[0]
		if c&0xe0 == 0xa0 {
			n := int(c&0x1f) + 1
			if n <= len(b) {
				return b[1:n], b[n:], nil
			}
		} else if c == mStr8 && len(b) >= 2 {
			end := 2 + int(b[1])
			if end <= len(b) {
				return b[2:end], b[end:], nil
			}
		}
	}
	t, r, err := readOne(b)
	if err != nil {
		return nil, b, err
	}
	if t.t != StrType {
		return nil, b, typeError(t, stringType, 0)
	}
	end := r.off + int(t.n)
	return b[r.off:end], b[end:], nil
}

// ReadString reads a str into a new string.
func ReadString(b []byte) (string, []byte, error) {
	s, rest, err := ReadStringBytes(b)
	return string(s), rest, err
}

// ReadBytes reads a bin and returns its bytes as a sub-slice of b (no copy).
func ReadBytes(b []byte) (v, rest []byte, err error) {
	t, r, err := readOne(b)
	if err != nil {
		return nil, b, err
	}
	if t.t != BinType {
		return nil, b, typeError(t, bytesType, 0)
	}
	end := r.off + int(t.n)
	return b[r.off:end], b[end:], nil
}

// ReadArrayHeader reads the head of an array and returns its count; the elements follow in rest.
// The count is known to fit in the bytes left (each element takes at least one byte), so it is
// safe to allocate for.
func ReadArrayHeader(b []byte) (n int, rest []byte, err error) {
	if len(b) > 0 {
		if c := b[0]; c&0xf0 == 0x90 {
			n = int(c & 0x0f)
			if n < len(b) {
				return n, b[1:], nil
			}
		} else if c == mArray16 && len(b) >= 3 {
			n = int(b[1])<<8 | int(b[2])
			if n <= len(b)-3 {
				return n, b[3:], nil
			}
		}
	}
	t, r, err := readOne(b)
	if err != nil {
		return 0, b, err
	}
	if t.t != ArrayType {
		return 0, b, typeError(t, reflect.TypeFor[[]any](), 0)
	}
	return int(t.n), b[r.off:], nil
}

// ReadMapHeader reads the head of a map and returns its count of key/value pairs; the 2n values
// follow in rest. The count is known to fit in the bytes left.
func ReadMapHeader(b []byte) (n int, rest []byte, err error) {
	if len(b) > 0 && b[0]&0xf0 == 0x80 {
		n = int(b[0] & 0x0f)
		if 2*n < len(b) {
			return n, b[1:], nil
		}
	}
	t, r, err := readOne(b)
	if err != nil {
		return 0, b, err
	}
	if t.t != MapType {
		return 0, b, typeError(t, reflect.TypeFor[map[string]any](), 0)
	}
	return int(t.n), b[r.off:], nil
}

// ReadExt reads an ext (a timestamp too) and returns its type and payload as a sub-slice of b.
func ReadExt(b []byte) (typ int8, data, rest []byte, err error) {
	t, r, err := readOne(b)
	if err != nil {
		return 0, nil, b, err
	}
	if t.t != ExtType {
		return 0, nil, b, typeError(t, extType, 0)
	}
	end := r.off + int(t.n)
	return t.ext, b[r.off:end], b[end:], nil
}

// ReadTimestamp reads a timestamp ext (type -1, 4, 8 or 12 bytes) exactly: seconds since the Unix
// epoch and nanoseconds (0..999999999).
func ReadTimestamp(b []byte) (sec int64, nsec uint32, rest []byte, err error) {
	t, r, err := readOne(b)
	if err != nil {
		return 0, 0, b, err
	}
	if t.t != ExtType || t.ext != TimestampExt {
		return 0, 0, b, typeError(t, timeType, 0)
	}
	end := r.off + int(t.n)
	sec, nsec, _ = parseTimestamp(b[r.off:end])
	return sec, nsec, b[end:], nil
}

// ReadTime reads a timestamp ext as a time.Time in UTC. Seconds beyond what time.Time holds
// (after the year 292277026596) are an *UnmarshalTypeError; ReadTimestamp reads those.
func ReadTime(b []byte) (time.Time, []byte, error) {
	sec, nsec, rest, err := ReadTimestamp(b)
	if err != nil {
		return time.Time{}, b, err
	}
	if sec > maxTimeSec {
		return time.Time{}, b, &UnmarshalTypeError{Value: "timestamp " + strconv.FormatInt(sec, 10), Type: timeType}
	}
	return time.Unix(sec, int64(nsec)).UTC(), rest, nil
}

// maxTimeSec is the last Unix second time.Time can hold: it counts seconds from the year 1 in an
// int64, 62135596800 s before the Unix epoch.
const maxTimeSec = math.MaxInt64 - 62135596800

// Skip checks and passes over one whole value (with the default limits, depth included) and
// returns the rest of b.
func Skip(b []byte) ([]byte, error) {
	r := newReader(b, &defaultLimits)
	if err := r.skip(); err != nil {
		return b, err
	}
	return b[r.off:], nil
}
