package mpk

import (
	"encoding/binary"
	"math"
	"math/bits"
	"reflect"
	"time"
	"unsafe"
)

// decodeAny decodes one value into the Go types Unmarshal documents for an `any`.
func (d *decodeState) decodeAny() (any, error) {
	h := d.off
	data := d.data
	if h < len(data) {
		c := data[h]
		if c <= 0x7f {
			d.off++
			return int64(c), nil
		}
		if c&0xe0 == 0xa0 && !d.strict {
			n := int(c & 0x1f)
			if end := h + 1 + n; end <= len(data) && uint32(n) <= d.lim.Str {
				d.off, d.lastHead = end, h
				return d.boxString(d.str(data[h+1 : end])), nil
			}
		}
		// Floats fill numeric documents (canada.json is mostly float 64 pairs): read them here
		// rather than through head's switch.
		if c == mFloat64 && h+9 <= len(data) {
			d.off = h + 9
			return d.boxNum(boxFloat64Type, binary.BigEndian.Uint64(data[h+1:])), nil
		}
		if c >= 0xe0 {
			d.off++
			return d.boxInt(int64(int8(c))), nil
		}
		if c >= mUint8 && c <= mInt64 {
			if x, ok := d.wideIntAny(c, h); ok {
				return x, nil
			}
		}
	}
	t, err := d.head()
	if err != nil {
		return nil, err
	}
	switch t.t {
	case NilType:
		return nil, nil
	case BoolType:
		return t.n != 0, nil
	case IntType:
		if t.neg || t.n <= math.MaxInt64 {
			return d.boxInt(int64(t.n)), nil
		}
		return d.boxNum(boxUint64Type, t.n), nil
	case Float32Type:
		return math.Float32frombits(uint32(t.n)), nil
	case Float64Type:
		return d.boxNum(boxFloat64Type, t.n), nil
	case StrType:
		end := d.off + int(t.n)
		s := d.str(data[d.off:end])
		d.off = end
		return d.boxString(s), nil
	case BinType:
		end := d.off + int(t.n)
		b := d.bytes(data[d.off:end])
		d.off = end
		return b, nil
	case ArrayType:
		if d.tooMany() {
			return nil, d.refuse(Truncated, h)
		}
		if err := d.charge(anyArrayBytes(t.n), h); err != nil {
			return nil, err
		}
		x, a := newAnyArray(int(t.n))
		d.depth++
		floor := d.floor
		d.floor = d.open
		if len(a) > 0 && d.off < len(data) && numHeads[data[d.off]] {
			if err := d.decodeNumElems(a); err != nil {
				return nil, err
			}
		} else {
			for i := range a {
				if a[i], err = d.decodeAny(); err != nil {
					return nil, err
				}
			}
		}
		d.depth--
		d.floor = floor
		return x, nil
	case MapType:
		if d.tooMany() {
			return nil, d.refuse(Truncated, h)
		}
		// A map entry costs about its key and value headers and a share of the buckets.
		if err := d.charge(48*min(t.n, maxMapPresize), h); err != nil {
			return nil, err
		}
		floor := d.floor
		d.floor = d.open
		var m any
		if d.mapAny {
			m, err = d.decodeMapAnyAny(int(t.n), nil)
		} else {
			m, err = d.decodeMapString(int(t.n))
		}
		d.floor = floor
		return m, err
	}
	return d.decodeExtAny(t, h)
}

// decodeNumElems decodes the elements of an array whose first element is a number into a.
// Numbers are read in this loop, with their boxes taken from the decode's number chunk through
// locals, and anything else goes to decodeAny. Measured (callgrind, go/bench cmd/prof with GOGC=off, instructions per Unmarshal
// into `any`): c_ints (65536 ints of 1 to 3 bytes) took 10.2M, about 155 an element, in
// decodeAny, wideIntAny, boxInt and boxNum (calls, spills and the chunk's state stored back
// each time); figures after are in go/bench/README.md. The fallback is decodeAny's own loop,
// one decodeAny an element, taken when numElemsLoop is false (TestNumElemsPaths runs both) and
// for arrays that do not start with a number.
func (d *decodeState) decodeNumElems(a []any) error {
	if !numElemsLoop {
		for i := range a {
			var err error
			if a[i], err = d.decodeAny(); err != nil {
				return err
			}
		}
		return nil
	}
	data := d.data
	nums, k := d.nums, d.numOff
	for i := range a {
		off := d.off
		if off+9 <= len(data) {
			c := data[off]
			var typ unsafe.Pointer
			var bits uint64
			switch {
			case c <= 0x7f:
				a[i] = smallInt(int64(c))
				d.off = off + 1
				continue
			case c >= 0xe0:
				a[i] = smallInt(int64(int8(c)))
				d.off = off + 1
				continue
			case c == mFloat64:
				typ, bits = boxFloat64Type, binary.BigEndian.Uint64(data[off+1:])
				d.off = off + 9
			case c >= mUint8 && c <= mInt64:
				// 1, 2, 4 or 8 bytes after the head, read as the top of a big-endian word
				w := uint(8) << ((c - mUint8) & 3)
				sh := 64 - w
				u := binary.BigEndian.Uint64(data[off+1:]) >> sh
				v := int64(u)
				if c >= mInt8 {
					v = int64(u<<sh) >> sh
				} else if v < 0 {
					goto general // a uint64 above MaxInt64
				}
				d.off = off + 1 + int(w/8)
				if uint64(v-smallIntMin) < uint64(len(smallInts)) {
					a[i] = smallInt(v)
					continue
				}
				typ, bits = boxInt64Type, uint64(v)
			default:
				goto general
			}
			if k == len(nums) {
				d.numOff = k
				if !d.newNumChunk() {
					a[i] = boxLeaf(typ, bits)
					nums, k = d.nums, d.numOff
					continue
				}
				nums, k = d.nums, 0
			}
			nums[k] = bits
			a[i] = makeAny(typ, unsafe.Pointer(&nums[k]))
			k++
			continue
		}
	general:
		d.numOff = k
		var err error
		if a[i], err = d.decodeAny(); err != nil {
			return err
		}
		nums, k = d.nums, d.numOff
	}
	d.numOff = k
	return nil
}

// numHeads[c] reports whether c heads a number that decodeNumElems' loop reads: an array whose
// first element is not one (strings, maps) takes decodeAny's own loop, which the number loop's
// checks would slow down (c_strings: 605k -> 637k instructions per Unmarshal when every array
// took it). A table, not four comparisons: decodeAny runs for every value, and the comparisons
// cost twitter about one instruction a value.
var numHeads = func() (t [256]bool) {
	for c := range t {
		t[c] = c <= 0x7f || c >= 0xe0 || c == mFloat64 || (c >= mUint8 && c <= mInt64)
	}
	return
}()

// numElemsLoop selects decodeNumElems' loop; tests turn it off to run the fallback.
var numElemsLoop = true

// wideIntAny reads the int of 1 to 8 bytes after head c at h, when they are present, without
// head's general switch and token: integer arrays (rb_integers, c_ints) are made of them.
func (d *decodeState) wideIntAny(c byte, h int) (any, bool) {
	data := d.data
	var v int64
	switch c {
	case mUint8, mInt8:
		if h+2 > len(data) {
			return nil, false
		}
		v = int64(data[h+1])
		if c == mInt8 {
			v = int64(int8(v))
		}
		d.off = h + 2
	case mUint16, mInt16:
		if h+3 > len(data) {
			return nil, false
		}
		u := binary.BigEndian.Uint16(data[h+1:])
		v = int64(u)
		if c == mInt16 {
			v = int64(int16(u))
		}
		d.off = h + 3
	case mUint32, mInt32:
		if h+5 > len(data) {
			return nil, false
		}
		u := binary.BigEndian.Uint32(data[h+1:])
		v = int64(u)
		if c == mInt32 {
			v = int64(int32(u))
		}
		d.off = h + 5
	default:
		if h+9 > len(data) {
			return nil, false
		}
		u := binary.BigEndian.Uint64(data[h+1:])
		d.off = h + 9
		if c == mUint64 && u > math.MaxInt64 {
			return d.boxNum(boxUint64Type, u), true
		}
		v = int64(u)
	}
	return d.boxInt(v), true
}

func (d *decodeState) decodeExtAny(t tok, h int) (any, error) {
	payload := d.data[d.off : d.off+int(t.n)]
	if t.ext == TimestampExt {
		sec, nsec, _ := parseTimestamp(payload)
		d.off += int(t.n)
		if sec > maxTimeSec {
			return Timestamp{Sec: sec, Nsec: nsec}, nil
		}
		return time.Unix(sec, int64(nsec)).UTC(), nil
	}
	if c := extByType(t.ext); c != nil {
		d.off += int(t.n)
		x, err := c.decode(payload)
		if err != nil {
			d.save(err)
			return nil, nil
		}
		return x.Interface(), nil
	}
	data := d.bytes(payload)
	d.off += int(t.n)
	return Ext{Type: t.ext, Data: data}, nil
}

// decodeMapString decodes a map of n pairs whose keys are expected to be str; at the first key
// that is not, it moves what it has into a map[any]any and goes on there.
func (d *decodeState) decodeMapString(n int) (any, error) {
	m := make(map[string]any, min(n, maxMapPresize))
	data := d.data
	d.depth++
	for i := 0; i < n; i++ {
		kh := d.off
		var key string
		if kh < len(data) && data[kh]&0xe0 == 0xa0 && !d.strict {
			kn := int(data[kh] & 0x1f)
			if end := kh + 1 + kn; end <= len(data) && uint32(kn) <= d.lim.Str {
				d.lastHead = kh
				key = d.key(data[kh+1 : end])
				d.off = end
				goto value
			}
		}
		{
			t, err := d.head()
			if err != nil {
				return nil, err
			}
			if t.t != StrType {
				d.off = kh
				moved := make(map[any]any, min(n, maxMapPresize))
				for k, v := range m {
					moved[k] = v
				}
				d.depth--
				return d.decodeMapAnyAny(n-i, moved)
			}
			end := d.off + int(t.n)
			key = d.key(data[d.off:end])
			d.off = end
		}
	value:
		v, err := d.decodeAny()
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	d.depth--
	if n > sparseMapMin && len(m) < n/2 {
		m = resized(m) // sized for what it holds (see sparseMapMin)
	}
	return m, nil
}

// decodeMapAnyAny decodes n pairs into m (made when nil). A key Go cannot hash (an array, a map,
// a bin) is an *UnmarshalTypeError and its pair is dropped.
func (d *decodeState) decodeMapAnyAny(n int, m map[any]any) (any, error) {
	if m == nil {
		m = make(map[any]any, min(n, maxMapPresize))
	}
	d.depth++
	for i := 0; i < n; i++ {
		kh := d.off
		k, err := d.decodeAny()
		if err != nil {
			return nil, err
		}
		v, err := d.decodeAny()
		if err != nil {
			return nil, err
		}
		if k != nil && !reflect.TypeOf(k).Comparable() {
			if d.saved == nil {
				d.saved = &UnmarshalTypeError{Value: "unhashable map key", Type: anyType, Offset: d.base + int64(kh)}
			}
			continue
		}
		m[k] = v
	}
	d.depth--
	if n > sparseMapMin && len(m) < n/2 {
		m = resized(m) // sized for what it holds (see sparseMapMin)
	}
	return m, nil
}

var anyType = reflect.TypeFor[any]()

// The key cache keeps the strings of short map keys between decodes, so that the keys of
// repeated records are allocated once. It is a direct-mapped table in the pooled decode state:
// a slot holds the last key that hashed to it, compared in full before it is reused.
const (
	keyCacheSize   = 512 // slots; a power of two
	keyCacheMaxLen = 32  // longer keys are not cached
)

type keyCache [keyCacheSize]string

func (d *decodeState) key(b []byte) string {
	if len(b) > keyCacheMaxLen || d.copyStrings {
		return d.str(b)
	}
	slot := &d.keys[keyHash(b)&(keyCacheSize-1)]
	if *slot == string(b) {
		return *slot
	}
	s := string(b)
	*slot = s
	return s
}

// keyHash picks a key's slot in the key cache from its length and at most its first and last 8
// bytes, read as whole words, instead of FNV over every byte. A collision only costs a miss (the
// slot's key is compared in full). Measured (callgrind, go/bench cmd/prof, instructions per
// Unmarshal of citm_catalog.json into `any`, whose maps are keyed by 9-digit ids): key() took
// 2.19 of 26.25 million with FNV; see bench/README.md for after.
func keyHash(b []byte) uint32 {
	n := len(b)
	var x uint64
	switch {
	case n >= 8:
		x = binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 29)
	case n >= 4:
		x = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		x = uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
	}
	x = (x ^ uint64(n)) * 0x9e3779b97f4a7c15
	return uint32(x >> 40)
}

// resized returns a copy of m sized for its length (maps.Clone keeps m's room).
func resized[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
