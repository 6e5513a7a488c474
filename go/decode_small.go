package mpk

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The small-message path of Unmarshal into an `any`: a message of at most smallAnyMax bytes
// made only of nil, bool, ints, floats, str, bin, arrays and maps with str keys, at most
// smallAnyDepth deep, is decoded here without the pooled decode state. Anything else (an ext, a
// map key that is not a str, malformed or truncated bytes, deeper nesting) makes it give up
// before it has touched the destination, and the general decoder (decodeAny) decodes the message
// from the start, with its errors. It is tested against decodeAny (TestSmallAnyMatchesGeneral).
//
// Measured (callgrind, go/bench cmd/prof, instructions per Unmarshal): [1,2] took 1437
// instructions against tinylib/msgp's ReadIntfBytes 948, a fifth of them getting, resetting and
// putting back the pooled state and its arena; the seed's Product as a map decoded at 0.64x
// msgp's speed.
//
// The strings of the message are substrings of one copy of the message (made at its first
// str), so a message allocates once for all its strings; a retained string keeps at most
// smallAnyMax bytes alive. Bins get their own copies (a []byte may be written to).
const (
	smallAnyMax   = 512
	smallAnyDepth = 16
)

type smallDecoder struct {
	data []byte
	off  int
	text string // a copy of data, made at the first str
	// boxes for numbers and strings (see box.go and slot): what is left of the current chunk,
	// made at the first number or string that needs a box
	boxes   []string
	counted bool // the second chunk was sized by countBoxes
}

// slot returns the box for the number or string just read (s.off is past it, at the next head).
// The strings and numbers of a message share their chunks, a number in the second word of its
// slot. The first chunk has room for smallFirstBoxes, or for what the bytes left can hold (a
// boxed value takes at least 2 bytes); when a message needs more, the second chunk has exactly
// the boxes the rest needs (countBoxes from s.off: it may count the keys still to come in maps
// already open, a slot each, never less). The chunks used to be sized from the bytes left only
// (up to 64 slots each for numbers and for strings): the seed's Product as a map (192 bytes,
// 5 boxed strings and 2 boxed ints) allocated 1,536 bytes of boxes, 2,304 B/op in all against
// 712 B/op with Go's own boxing, and ran at 0.69x msgp's speed in the bench (the collector's
// work grows with the bytes). Counting the whole message at the first box cost about 10
// instructions a value (callgrind: table16, 163 bytes, 15.1k instructions per Unmarshal against
// 13.2k before); the first chunk of 8 spares most small messages the count. TestSmallAnyBoxBytes
// pins the bytes.
func (s *smallDecoder) slot() *string {
	if len(s.boxes) == 0 {
		n := 1 // a count that fell short (it cannot, see TestCountBoxes): one box at a time
		switch {
		case s.boxes == nil:
			n = min(smallFirstBoxes, 1+(len(s.data)-s.off)/2)
		case !s.counted:
			s.counted = true
			n = 1 + countBoxes(s.data[s.off:])
		}
		s.boxes = make([]string, n)
	}
	p := &s.boxes[0]
	s.boxes = s.boxes[1:]
	return p
}

// smallFirstBoxes is the most boxes of a small message's first chunk.
const smallFirstBoxes = 8

// boxNum is decodeState.boxNum for the small-message path: [-1,-2] took three allocations (the
// array and a box per int) and takes two. The number goes in the length word of a string slot:
// the collector scans only the slot's pointer word, which stays nil, and the interface points
// inside the chunk, which keeps it alive as a pointer to its start would.
func (s *smallDecoder) boxNum(typ unsafe.Pointer, bits uint64) any {
	p := (*[2]uint64)(unsafe.Pointer(s.slot()))
	p[1] = bits
	return makeAny(typ, unsafe.Pointer(&p[1]))
}

func (s *smallDecoder) boxInt(v int64) any {
	if uint64(v-smallIntMin) < uint64(len(smallInts)) {
		return smallInt(v)
	}
	return s.boxNum(boxInt64Type, uint64(v))
}

func (s *smallDecoder) boxString(v string) any {
	if len(v) == 0 {
		return ""
	}
	p := s.slot()
	*p = v
	return makeAny(boxStringType, unsafe.Pointer(p))
}

// countBoxes counts the values of a message that smallDecoder boxes: strings of at least a
// byte that are not map keys, ints outside smallInts, uint64s above MaxInt64, float 64s. It steps
// from head to head in one loop (a container's elements follow its head) and does not tell keys
// from values: it counts every string and takes one key per map pair off, adding back the empty
// strings (an empty key needs no box and was not counted). So the count is exact when no string
// is empty and at most one box a empty string over otherwise. A stack of the open containers
// to tell keys apart cost 60 instructions a value (callgrind: 811 of the 5038 a Product as a map
// took); this loop costs about 10. It stops at anything the small path does not decode (the
// decode gives up there too). TestCountBoxes checks it against the boxes a decode fills.
func countBoxes(data []byte) int {
	strs, empty, pairs, nums := 0, 0, 0, 0
	for off := 0; off < len(data); {
		c := data[off]
		switch {
		case c <= 0x7f || c >= 0xe0: // fixint
			off++
			continue
		case c <= 0x8f: // fixmap
			pairs += int(c & 0x0f)
			off++
			continue
		case c <= 0x9f: // fixarray
			off++
			continue
		case c <= 0xbf: // fixstr
			if c == 0xa0 {
				empty++
			} else {
				strs++
			}
			off += 1 + int(c&0x1f)
			continue
		}
		switch {
		case c == mNil || c == mFalse || c == mTrue:
			off++
		case c == mUint8 || c == mInt8: // within smallInts
			off += 2
		case c == mFloat32:
			off += 5
		case c == mFloat64:
			nums++
			off += 9
		case c >= mUint16 && c <= mUint64:
			// a canonical encoding of these needs a box (a value that fits smallInts in a wider
			// head is counted too: a box left unused)
			nums++
			off += 1 + 1<<(c-mUint8)
		case c >= mInt16 && c <= mInt64:
			nums++
			off += 1 + 1<<(c-mInt8)
		case c == mStr8 && off+2 <= len(data):
			if data[off+1] == 0 {
				empty++
			} else {
				strs++
			}
			off += 2 + int(data[off+1])
		case c == mBin8 && off+2 <= len(data):
			off += 2 + int(data[off+1])
		case c == mBin16 && off+3 <= len(data):
			off += 3 + int(binary.BigEndian.Uint16(data[off+1:]))
		case c == mArray16 && off+3 <= len(data):
			off += 3
		case c == mMap16 && off+3 <= len(data):
			pairs += int(binary.BigEndian.Uint16(data[off+1:]))
			off += 3
		default:
			off = len(data)
		}
	}
	return max(strs-pairs+empty, 0) + nums
}

// decodeSmallAny decodes data into a value, or reports false. It gives up on anything the
// general decoder could report differently; declared counts are checked against the bytes left
// together with the elements every open container still owes, as the general decoder does.
func decodeSmallAny(data []byte) (any, bool) {
	if len(data) > smallAnyMax {
		return nil, false
	}
	if x, ok := decodeFlatArray(data); ok {
		return x, true
	}
	s := smallDecoder{data: data}
	v, ok := s.value(0, 0)
	if !ok || s.off != len(data) {
		return nil, false
	}
	return v, true
}

// decodeFlatArray decodes a message that is one fixarray of one-byte values (fixints, nil,
// true, false), the shape of [1,2] and [-1,-2], in one loop with no call per element and no
// allocation besides the array (the ints have static boxes, see smallInts). Measured (callgrind,
// go/bench cmd/prof, instructions per Unmarshal into `any`): see bench/README.md.
func decodeFlatArray(data []byte) (any, bool) {
	if len(data) == 0 || data[0]&0xf0 != 0x90 || len(data) != int(data[0]&0x0f)+1 {
		return nil, false
	}
	for _, c := range data[1:] {
		if 0x7f < c && c < 0xe0 && c != mNil && c != mFalse && c != mTrue {
			return nil, false
		}
	}
	x, a := newAnyArray(len(data) - 1)
	for i, c := range data[1:] {
		switch c {
		case mNil:
		case mFalse:
			a[i] = false
		case mTrue:
			a[i] = true
		default:
			a[i] = smallInt(int64(int8(c)))
		}
	}
	return x, true
}

// value decodes the value at s.off; owed is how many values the open containers still need
// after this one.
func (s *smallDecoder) value(depth, owed int) (any, bool) {
	d := s.data
	h := s.off
	if h >= len(d) {
		return nil, false
	}
	c := d[h]
	switch {
	case c <= 0x7f:
		s.off++
		return int64(c), true
	case c >= 0xe0:
		s.off++
		return s.boxInt(int64(int8(c))), true
	case c&0xe0 == 0xa0:
		return s.strValue(h+1, int(c&0x1f))
	case c&0xf0 == 0x90:
		return s.array(h+1, int(c&0x0f), depth, owed)
	case c&0xf0 == 0x80:
		return s.mapStr(h+1, int(c&0x0f), depth, owed)
	}
	switch c {
	case mNil:
		s.off++
		return nil, true
	case mFalse:
		s.off++
		return false, true
	case mTrue:
		s.off++
		return true, true
	case mFloat64:
		if h+9 > len(d) {
			return nil, false
		}
		s.off = h + 9
		return s.boxNum(boxFloat64Type, binary.BigEndian.Uint64(d[h+1:])), true
	case mFloat32:
		if h+5 > len(d) {
			return nil, false
		}
		s.off = h + 5
		return math.Float32frombits(binary.BigEndian.Uint32(d[h+1:])), true
	case mUint8, mUint16, mUint32, mUint64:
		w := 1 << (c - mUint8)
		if h+1+w > len(d) {
			return nil, false
		}
		u := beUint(d[h+1 : h+1+w])
		s.off = h + 1 + w
		if u <= math.MaxInt64 {
			return s.boxInt(int64(u)), true
		}
		return s.boxNum(boxUint64Type, u), true
	case mInt8, mInt16, mInt32, mInt64:
		w := 1 << (c - mInt8)
		if h+1+w > len(d) {
			return nil, false
		}
		u := beUint(d[h+1 : h+1+w])
		shift := 64 - 8*w
		s.off = h + 1 + w
		return s.boxInt(int64(u<<shift) >> shift), true
	case mStr8:
		if h+2 > len(d) {
			return nil, false
		}
		return s.strValue(h+2, int(d[h+1]))
	case mBin8:
		if h+2 > len(d) {
			return nil, false
		}
		n := int(d[h+1])
		if h+2+n > len(d) {
			return nil, false
		}
		s.off = h + 2 + n
		if n == 0 {
			return []byte{}, true
		}
		b := append([]byte(nil), d[h+2:h+2+n]...)
		return b[:n:n], true
	case mBin16:
		if h+3 > len(d) {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(d[h+1:]))
		if h+3+n > len(d) {
			return nil, false
		}
		s.off = h + 3 + n
		if n == 0 {
			return []byte{}, true
		}
		b := append([]byte(nil), d[h+3:h+3+n]...)
		return b[:n:n], true
	case mArray16:
		if h+3 > len(d) {
			return nil, false
		}
		return s.array(h+3, int(binary.BigEndian.Uint16(d[h+1:])), depth, owed)
	case mMap16:
		if h+3 > len(d) {
			return nil, false
		}
		return s.mapStr(h+3, int(binary.BigEndian.Uint16(d[h+1:])), depth, owed)
	}
	return nil, false // str16/32, bin32, array32, map32, ext, 0xc1: the general decoder
}

func beUint(b []byte) uint64 {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return u
}

func (s *smallDecoder) strValue(p, n int) (any, bool) {
	if str, ok := s.str(p, n); ok {
		return s.boxString(str), true
	}
	return nil, false
}

// str returns the n bytes at p as a substring of the message's copy.
func (s *smallDecoder) str(p, n int) (string, bool) {
	if p+n > len(s.data) {
		return "", false
	}
	s.off = p + n
	if n == 0 {
		return "", true
	}
	if s.text == "" {
		s.text = string(s.data)
	}
	return s.text[p : p+n], true
}

func (s *smallDecoder) array(p, n, depth, owed int) (any, bool) {
	// every element takes at least a byte, and so does every value the open containers owe
	if depth >= smallAnyDepth || p+n+owed > len(s.data) {
		return nil, false
	}
	s.off = p
	x, a := newAnyArray(n)
	for i := range a {
		v, ok := s.value(depth+1, owed+n-1-i)
		if !ok {
			return nil, false
		}
		a[i] = v
	}
	return x, true
}

func (s *smallDecoder) mapStr(p, n, depth, owed int) (any, bool) {
	if depth >= smallAnyDepth || p+2*n+owed > len(s.data) {
		return nil, false
	}
	s.off = p
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		h := s.off
		if h >= len(s.data) {
			return nil, false
		}
		var k string
		var ok bool
		switch c := s.data[h]; {
		case c&0xe0 == 0xa0:
			k, ok = s.str(h+1, int(c&0x1f))
		case c == mStr8 && h+2 <= len(s.data):
			k, ok = s.str(h+2, int(s.data[h+1]))
		}
		if !ok {
			return nil, false
		}
		v, ok := s.value(depth+1, owed+2*(n-1-i))
		if !ok {
			return nil, false
		}
		m[k] = v // the last of duplicate keys wins, as in decodeMapString
	}
	return m, true
}
