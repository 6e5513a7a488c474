package mpk

import (
	"encoding/binary"
	"unicode/utf8"
)

// reader is the one-shot decoding state shared by Unmarshal, Skip and the stream: the input, the
// position, the nesting depth and the limits. head checks one token exactly in the order of
// spec/README.md, so every path that reads through it reports the same kind at the same offset.
type reader struct {
	data   []byte
	off    int
	depth  int
	lim    Limits
	strict bool  // reject str that is not valid UTF-8
	stream bool  // more input may follow: a container's count is not checked against the bytes left
	base   int64 // offset of data[0] in the whole input (the stream's position), for errors
	// lastHead is the head byte of the last token read, for errors found after it was consumed
	// (an allocation over DecodeOptions.MaxAlloc).
	lastHead int
	// maxDepth is lim.Depth capped at MaxDepth: deeper nesting is refused before the recursion
	// could exhaust the goroutine stack.
	maxDepth int
	// floor is a lower bound on the input length that the values owed by every open container
	// need (each value takes at least one byte): decoders that enter a container set it to open
	// and restore it when they leave. open is the floor inside the container head read last;
	// when it is over len(data) the input is certainly truncated, and a decoder about to allocate
	// for that container's count refuses (see decodeState.refuse), which bounds what the declared
	// counts of all open containers together can allocate by the input's length.
	floor, open int
}

// newReader returns a reader over data with the limits lim.
func newReader(data []byte, lim *Limits) reader {
	return reader{data: data, lim: *lim, maxDepth: depthCap(lim.Depth)}
}

// depthCap is the depth a reader enforces for a Limits.Depth: the limit, at most MaxDepth.
func depthCap(depth uint32) int {
	return int(min(depth, MaxDepth))
}

// tok is one parsed token head.
type tok struct {
	t   Type
	neg bool   // IntType: n holds a negative int64
	ext int8   // ExtType: the ext type
	n   uint64 // int: the bits; float: the bits; bool: 0/1; str/bin/ext: payload length; array/map: count
}

func (r *reader) fail(k Kind, at int) error {
	return &DecodeError{Kind: k, Offset: r.base + int64(at)}
}

// head parses the token at r.off and checks it completely (spec steps 1 to 6). On success r.off
// is past the token's head and length fields; for str, bin and ext the payload of t.n bytes
// follows and is known to be present, and for arrays and maps the elements follow.
func (r *reader) head() (tok, error) {
	d, h := r.data, r.off
	r.lastHead = h
	if h >= len(d) {
		return tok{}, r.fail(Truncated, h)
	}
	c := d[h]
	switch {
	case c <= 0x7f:
		r.off++
		return tok{t: IntType, n: uint64(c)}, nil
	case c >= 0xe0:
		r.off++
		return tok{t: IntType, n: uint64(int64(int8(c))), neg: true}, nil
	case c <= 0x8f:
		return r.container(MapType, uint64(c&0x0f), h, 1)
	case c <= 0x9f:
		return r.container(ArrayType, uint64(c&0x0f), h, 1)
	case c <= 0xbf:
		return r.str(uint64(c&0x1f), h, 1)
	}
	switch c {
	case mNil:
		r.off++
		return tok{t: NilType}, nil
	case mFalse, mTrue:
		r.off++
		return tok{t: BoolType, n: uint64(c & 1)}, nil
	case mBin8, mBin16, mBin32:
		w := 1 << (c - mBin8)
		if len(d)-h < 1+w {
			return tok{}, r.fail(Truncated, h)
		}
		n := readLen(d[h+1:], w)
		if n > uint64(r.lim.Bin) {
			return tok{}, r.fail(LengthLimit, h)
		}
		return r.payload(tok{t: BinType, n: n}, h, 1+w)
	case mStr8, mStr16, mStr32:
		w := 1 << (c - mStr8)
		if len(d)-h < 1+w {
			return tok{}, r.fail(Truncated, h)
		}
		return r.str(readLen(d[h+1:], w), h, 1+w)
	case mArray16, mArray32:
		w := 2 << (c - mArray16)
		if len(d)-h < 1+w {
			return tok{}, r.fail(Truncated, h)
		}
		return r.container(ArrayType, readLen(d[h+1:], w), h, 1+w)
	case mMap16, mMap32:
		w := 2 << (c - mMap16)
		if len(d)-h < 1+w {
			return tok{}, r.fail(Truncated, h)
		}
		return r.container(MapType, readLen(d[h+1:], w), h, 1+w)
	case mFloat32:
		if len(d)-h < 5 {
			return tok{}, r.fail(Truncated, h)
		}
		r.off += 5
		return tok{t: Float32Type, n: uint64(binary.BigEndian.Uint32(d[h+1:]))}, nil
	case mFloat64:
		if len(d)-h < 9 {
			return tok{}, r.fail(Truncated, h)
		}
		r.off += 9
		return tok{t: Float64Type, n: binary.BigEndian.Uint64(d[h+1:])}, nil
	case mUint8, mUint16, mUint32, mUint64:
		w := 1 << (c - mUint8)
		if len(d)-h < 1+w {
			return tok{}, r.fail(Truncated, h)
		}
		r.off += 1 + w
		return tok{t: IntType, n: readLen(d[h+1:], w)}, nil
	case mInt8, mInt16, mInt32, mInt64:
		w := 1 << (c - mInt8)
		if len(d)-h < 1+w {
			return tok{}, r.fail(Truncated, h)
		}
		r.off += 1 + w
		v := readSigned(d[h+1:], w)
		return tok{t: IntType, n: uint64(v), neg: v < 0}, nil
	case mFixExt1, mFixExt2, mFixExt4, mFixExt8, mFixExt16:
		if len(d)-h < 2 {
			return tok{}, r.fail(Truncated, h)
		}
		return r.ext(uint64(1)<<(c-mFixExt1), h, 1)
	case mExt8, mExt16, mExt32:
		w := 1 << (c - mExt8)
		if len(d)-h < 2+w {
			return tok{}, r.fail(Truncated, h)
		}
		return r.ext(readLen(d[h+1:], w), h, 1+w)
	}
	return tok{}, r.fail(InvalidByte, h)
}

// readLen reads a big-endian unsigned field of w bytes (1, 2, 4 or 8).
func readLen(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func readSigned(b []byte, w int) int64 {
	switch w {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.BigEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b)))
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (r *reader) str(n uint64, h, hdr int) (tok, error) {
	if n > uint64(r.lim.Str) {
		return tok{}, r.fail(LengthLimit, h)
	}
	t, err := r.payload(tok{t: StrType, n: n}, h, hdr)
	if err == nil && r.strict && !utf8.Valid(r.data[r.off:r.off+int(n)]) {
		r.off = h
		return tok{}, r.fail(InvalidUTF8, h)
	}
	return t, err
}

// payload checks that the n payload bytes after a header of hdr bytes are present.
func (r *reader) payload(t tok, h, hdr int) (tok, error) {
	if uint64(len(r.data)-h-hdr) < t.n {
		return tok{}, r.fail(Truncated, h)
	}
	r.off = h + hdr
	return t, nil
}

// container checks an array or map head: its count against the limit, its depth, then that the
// count fits in the bytes left (every element takes at least one byte, so a map of n pairs needs
// 2n), before anything is allocated for it.
func (r *reader) container(t Type, n uint64, h, hdr int) (tok, error) {
	need := n
	if t == MapType {
		if n > uint64(r.lim.Map) {
			return tok{}, r.fail(LengthLimit, h)
		}
		need = 2 * n
	} else if n > uint64(r.lim.Array) {
		return tok{}, r.fail(LengthLimit, h)
	}
	if r.depth >= r.maxDepth {
		return tok{}, r.fail(DepthLimit, h)
	}
	if uint64(len(r.data)-h-hdr) < need && !r.stream {
		return tok{}, r.fail(Truncated, h)
	}
	// need fits: it is at most the bytes left. The enclosing floor counted this value as one
	// byte; inside it, the floor grows by the rest of its head and one byte per element.
	r.open = max(r.floor+hdr+int(need)-1, h+hdr+int(need))
	r.off = h + hdr
	return tok{t: t, n: n}, nil
}

// ext checks an ext head whose length field (hdr bytes with the head byte) and type byte are
// present; for type -1 it also checks the timestamp's length and nanoseconds.
func (r *reader) ext(n uint64, h, hdr int) (tok, error) {
	typ := int8(r.data[h+hdr])
	if n > uint64(r.lim.Ext) {
		return tok{}, r.fail(LengthLimit, h)
	}
	t, err := r.payload(tok{t: ExtType, n: n, ext: typ}, h, hdr+1)
	if err != nil {
		if r.stream && typ == TimestampExt && n != 4 && n != 8 && n != 12 {
			// A stream reports what the bytes so far prove: no payload that may still come
			// makes this length a timestamp's. (One-shot, truncation comes first.)
			return tok{}, r.fail(InvalidTimestamp, h)
		}
		return t, err
	}
	if typ == TimestampExt {
		if _, _, ok := parseTimestamp(r.data[r.off : r.off+int(n)]); !ok {
			r.off = h
			return tok{}, r.fail(InvalidTimestamp, h)
		}
	}
	return t, nil
}

// maxNsec is the largest nsec a timestamp ext carries.
const maxNsec = 999999999

// parseTimestamp decodes the payload of a timestamp ext (4, 8 or 12 bytes).
func parseTimestamp(p []byte) (sec int64, nsec uint32, ok bool) {
	switch len(p) {
	case 4:
		return int64(binary.BigEndian.Uint32(p)), 0, true
	case 8:
		v := binary.BigEndian.Uint64(p)
		nsec = uint32(v >> 34)
		return int64(v & (1<<34 - 1)), nsec, nsec <= maxNsec
	case 12:
		nsec = binary.BigEndian.Uint32(p)
		return int64(binary.BigEndian.Uint64(p[4:])), nsec, nsec <= maxNsec
	}
	return 0, 0, false
}

// skip checks and passes over one whole value.
func (r *reader) skip() error {
	t, err := r.head()
	if err != nil {
		return err
	}
	switch t.t {
	case StrType, BinType, ExtType:
		r.off += int(t.n)
	case ArrayType, MapType:
		n := t.n
		if t.t == MapType {
			n *= 2
		}
		r.depth++
		for ; n > 0; n-- {
			if err := r.skip(); err != nil {
				return err
			}
		}
		r.depth--
	}
	return nil
}

// strFast reads a str token that needs no further checks (not strict mode, within the str
// limit, payload present) and returns its bytes; ok is false when the checked path must run.
func (r *reader) strFast() (b []byte, ok bool) {
	d, h := r.data, r.off
	if h >= len(d) || r.strict {
		return nil, false
	}
	c := d[h]
	var n, hdr int
	switch {
	case c&0xe0 == 0xa0:
		n, hdr = int(c&0x1f), 1
	case c == mStr8 && h+1 < len(d):
		n, hdr = int(d[h+1]), 2
	case c == mStr16 && h+2 < len(d):
		n, hdr = int(d[h+1])<<8|int(d[h+2]), 3
	default:
		return nil, false
	}
	end := h + hdr + n
	if end > len(d) || uint32(n) > r.lim.Str {
		return nil, false
	}
	r.off, r.lastHead = end, h
	return d[h+hdr : end], true
}
