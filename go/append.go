package mpk

import (
	"math"
	"time"
)

// The Append functions write one value in shortest form at the end of b and return the extended
// slice, like strconv.AppendInt. They never fail and allocate only when b has no room.

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, mNil) }

// AppendBool appends true or false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, mTrue)
	}
	return append(b, mFalse)
}

// AppendInt appends v as the shortest int: a fixint, else the smallest of uint 8..64 for v >= 0,
// int 8..64 for v < 0.
func AppendInt(b []byte, v int64) []byte {
	if uint64(v+32) < 32+128 { // -32..127: one byte, inlined at the call site
		return append(b, byte(v))
	}
	return appendIntWide(b, v)
}

// appendIntWide writes every non-fixint form itself rather than handing v >= 0 on to
// appendUintWide: one call per wide int instead of two.
func appendIntWide(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		switch {
		case v <= 0x7f:
			return append(b, byte(v))
		case v <= math.MaxUint8:
			return append(b, mUint8, byte(v))
		case v <= math.MaxUint16:
			return append(b, mUint16, byte(v>>8), byte(v))
		case v <= math.MaxUint32:
			return append(b, mUint32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
		return append(b, mUint64, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	case v >= -32:
		return append(b, byte(v))
	case v >= math.MinInt8:
		return append(b, mInt8, byte(v))
	case v >= math.MinInt16:
		return append(b, mInt16, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return append(b, mInt32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, mInt64, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// AppendUint appends v as the shortest non-negative int.
func AppendUint(b []byte, v uint64) []byte {
	if v <= 0x7f { // a fixint, inlined at the call site
		return append(b, byte(v))
	}
	return appendUintWide(b, v)
}

func appendUintWide(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, mUint8, byte(v))
	case v <= math.MaxUint16:
		return append(b, mUint16, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, mUint32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, mUint64, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// AppendFloat32 appends v as a float 32.
func AppendFloat32(b []byte, v float32) []byte {
	u := math.Float32bits(v)
	return append(b, mFloat32, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// AppendFloat64 appends v as a float 64.
func AppendFloat64(b []byte, v float64) []byte {
	u := math.Float64bits(v)
	return append(b, mFloat64, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32),
		byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}

// AppendStringHeader appends the head of a str of n bytes; the caller appends the bytes.
func AppendStringHeader(b []byte, n int) []byte {
	switch {
	case n <= 31:
		return append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(b, mStr8, byte(n))
	case n <= math.MaxUint16:
		return append(b, mStr16, byte(n>>8), byte(n))
	}
	return append(b, mStr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendString appends s as a str. The bytes are written as they are: Go strings may hold
// invalid UTF-8, and so may a MessagePack str. A string longer than 4294967295 bytes does not
// fit the format; the caller must not pass one.
func AppendString(b []byte, s string) []byte {
	if len(s) <= 31 {
		return append(append(b, 0xa0|byte(len(s))), s...)
	}
	return append(AppendStringHeader(b, len(s)), s...)
}

// AppendStringBytes appends s as a str.
func AppendStringBytes(b []byte, s []byte) []byte {
	if len(s) <= 31 {
		return append(append(b, 0xa0|byte(len(s))), s...)
	}
	return append(AppendStringHeader(b, len(s)), s...)
}

// AppendBytesHeader appends the head of a bin of n bytes; the caller appends the bytes.
func AppendBytesHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, mBin8, byte(n))
	case n <= math.MaxUint16:
		return append(b, mBin16, byte(n>>8), byte(n))
	}
	return append(b, mBin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendBytes appends v as a bin (a nil slice too: use AppendNil for nil).
func AppendBytes(b []byte, v []byte) []byte {
	return append(AppendBytesHeader(b, len(v)), v...)
}

// AppendArrayHeader appends the head of an array of n elements; the caller appends the elements.
func AppendArrayHeader(b []byte, n uint32) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, mArray16, byte(n>>8), byte(n))
	}
	return append(b, mArray32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendMapHeader appends the head of a map of n key/value pairs; the caller appends 2n values.
func AppendMapHeader(b []byte, n uint32) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, mMap16, byte(n>>8), byte(n))
	}
	return append(b, mMap32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendExtHeader appends the head of an ext of type typ with n payload bytes.
func AppendExtHeader(b []byte, typ int8, n int) []byte {
	switch n {
	case 1:
		return append(b, mFixExt1, byte(typ))
	case 2:
		return append(b, mFixExt2, byte(typ))
	case 4:
		return append(b, mFixExt4, byte(typ))
	case 8:
		return append(b, mFixExt8, byte(typ))
	case 16:
		return append(b, mFixExt16, byte(typ))
	}
	switch {
	case n <= math.MaxUint8:
		return append(b, mExt8, byte(n), byte(typ))
	case n <= math.MaxUint16:
		return append(b, mExt16, byte(n>>8), byte(n), byte(typ))
	}
	return append(b, mExt32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), byte(typ))
}

// AppendExt appends an ext of type typ carrying data.
func AppendExt(b []byte, typ int8, data []byte) []byte {
	return append(AppendExtHeader(b, typ, len(data)), data...)
}

// AppendTimestamp appends the timestamp ext (type -1) in its shortest form: 32 bits when
// nsec == 0 and 0 <= sec < 2^32, 64 bits when 0 <= sec < 2^34, else 96 bits. nsec must be
// below 1e9: like every Append function it does not fail, so the caller checks (Marshal of a
// Timestamp does, with an *InvalidTimestampError).
func AppendTimestamp(b []byte, sec int64, nsec uint32) []byte {
	if sec >= 0 && sec>>34 == 0 {
		if nsec == 0 && sec>>32 == 0 {
			return append(b, mFixExt4, 0xff, byte(sec>>24), byte(sec>>16), byte(sec>>8), byte(sec))
		}
		v := uint64(nsec)<<34 | uint64(sec)
		return append(b, mFixExt8, 0xff, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, mExt8, 12, 0xff, byte(nsec>>24), byte(nsec>>16), byte(nsec>>8), byte(nsec),
		byte(sec>>56), byte(sec>>48), byte(sec>>40), byte(sec>>32),
		byte(sec>>24), byte(sec>>16), byte(sec>>8), byte(sec))
}

// AppendTime appends t as a timestamp ext. Only the instant is written: the location (time zone)
// and the monotonic clock reading are dropped, and decoding gives back the instant in UTC.
func AppendTime(b []byte, t time.Time) []byte {
	return AppendTimestamp(b, t.Unix(), uint32(t.Nanosecond()))
}
