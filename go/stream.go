package mpk

import (
	"bytes"
	"errors"
	"io"
	"reflect"
)

// A Decoder reads a stream of consecutive MessagePack values from an io.Reader. It buffers at most
// one incomplete value plus one read: each value is checked token by token as its bytes arrive
// (limits, depth, invalid bytes, timestamps, UTF-8 in strict mode), so a bad value is reported as
// soon as its bytes show it, and a truncated one when the reader reports io.EOF. A Decoder is not
// safe for concurrent use.
type Decoder struct {
	r      io.Reader
	buf    []byte // buf[start:end] is buffered and unread
	start  int
	end    int
	offset int64 // stream offset of buf[start]
	scan   streamScan
	opts   DecodeOptions
	lim    Limits
	flags  codecFlags
	rerr   error // the reader's sticky error (io.EOF at the end)
	// open: for each container whose head ReadArrayHeader or ReadMapHeader read, innermost
	// last, how many values it still owes (a map owes two per pair); values read inside count
	// their depth from len(open).
	open []uint64
	// busy: Decode is building a value, and the value's bytes are still the buffer's first (see
	// ErrDecoderBusy)
	busy bool
}

// ErrDecoderBusy is returned by a Decoder's Decode, Skip, PeekType, ReadArrayHeader and
// ReadMapHeader when called while a Decode of the same Decoder is building a value: from an
// Unmarshaler's UnmarshalMsgpack, a TextUnmarshaler or another method that Decode calls. The
// running Decode has not consumed its value's bytes yet, so such a call would read them again and
// leave the Decoder's position wrong for every call after. Decode the bytes the method is given
// (with Unmarshal) instead. The running Decode goes on unharmed.
var ErrDecoderBusy = errors.New("mpk: Decoder used from inside its own Decode (by a method Decode called)")

// streamScan is the resumable scan of the value at buf[start:]: how many bytes are known to
// belong to it, and how many elements each open container still owes.
type streamScan struct {
	pos     int
	owed    []uint64
	started bool
}

// streamReadSize is the least free space offered to each Read.
const streamReadSize = 4096

// NewDecoder returns a Decoder reading from r with the default options.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, lim: defaultLimits}
}

// SetOptions sets the options used by the following calls to Decode.
func (dec *Decoder) SetOptions(o DecodeOptions) {
	dec.opts = o
	dec.lim = defaultLimits
	if o.Limits != nil {
		dec.lim = *o.Limits
	}
	dec.flags = o.flags()
}

// Decode reads the next value into v, as Unmarshal does. It returns io.EOF when the stream ends
// between values, and a *DecodeError whose Offset counts from the start of the stream when a
// value is malformed; a value cut off by the end of the stream is Truncated. After a
// *DecodeError the stream cannot be resynchronised and further calls return errors.
func (dec *Decoder) Decode(v any) error {
	if dec.busy {
		return ErrDecoderBusy
	}
	n, err := dec.next()
	if err != nil {
		return err
	}
	d := getDecodeState(dec.buf[dec.start:dec.start+n], &dec.lim, dec.opts.StrictUTF8, dec.flags)
	d.mapAny, d.copyStrings, d.base = dec.opts.MapAnyAny, dec.opts.CopyStrings, dec.offset
	d.maxAlloc = allocBudget(dec.opts.MaxAlloc, n)
	d.plain = d.plain && !dec.opts.MapAnyAny && !dec.opts.CopyStrings && dec.opts.MaxAlloc == 0
	d.depth, d.startDepth = len(dec.open), len(dec.open)
	dec.busy = true
	defer dec.notBusy() // also if a method d.unmarshal calls panics
	err = d.unmarshal(v)
	putDecodeState(d)
	dec.consume(n)
	dec.took(0)
	return err
}

func (dec *Decoder) notBusy() { dec.busy = false }

// Skip reads the next value and drops it.
func (dec *Decoder) Skip() error {
	if dec.busy {
		return ErrDecoderBusy
	}
	n, err := dec.next()
	if err != nil {
		return err
	}
	dec.consume(n)
	dec.took(0)
	return nil
}

// PeekType returns the family of the next value without reading it: it reads until the value's
// first byte is buffered. It returns io.EOF when the stream ends between values outside any
// container read by ReadArrayHeader or ReadMapHeader, a Truncated *DecodeError when it ends
// inside one, and an InvalidByte *DecodeError for the byte 0xc1.
func (dec *Decoder) PeekType() (Type, error) {
	if dec.busy {
		return InvalidType, ErrDecoderBusy
	}
	if err := dec.needByte(); err != nil {
		return InvalidType, err
	}
	c := dec.buf[dec.start]
	if c == mInvalid {
		return InvalidType, &DecodeError{Kind: InvalidByte, Offset: dec.offset}
	}
	return headType[c], nil
}

// ReadArrayHeader reads the head of an array and returns its count; its elements follow, each
// read by Decode, Skip or another header read. The count is checked against Limits.Array and the
// depth against Limits.Depth (containers opened by header reads count), but not against the bytes
// of the stream, which may still come: nothing is allocated for it. Another value (nil included:
// see PeekType) is an *UnmarshalTypeError and is left unread.
func (dec *Decoder) ReadArrayHeader() (int, error) {
	return dec.readHeader(ArrayType)
}

// ReadMapHeader reads the head of a map and returns its count of pairs; its keys and values
// follow, in turn, as for ReadArrayHeader (Limits.Map applies).
func (dec *Decoder) ReadMapHeader() (int, error) {
	return dec.readHeader(MapType)
}

var headerTypes = map[Type]reflect.Type{ArrayType: reflect.TypeFor[[]any](), MapType: reflect.TypeFor[map[any]any]()}

func (dec *Decoder) readHeader(want Type) (int, error) {
	typ, err := dec.PeekType()
	if err != nil {
		return 0, err
	}
	if typ != want {
		return 0, &UnmarshalTypeError{Value: typ.String(), Type: headerTypes[want], Offset: dec.offset}
	}
	for {
		r := reader{
			data:     dec.buf[dec.start:dec.end],
			depth:    len(dec.open),
			lim:      dec.lim,
			maxDepth: depthCap(dec.lim.Depth),
			stream:   true,
			base:     dec.offset,
		}
		t, err := r.head()
		if err == nil {
			dec.consume(r.off)
			n := t.n
			if t.t == MapType {
				n *= 2
			}
			dec.took(n)
			return int(t.n), nil
		}
		if de, ok := err.(*DecodeError); !ok || de.Kind != Truncated {
			return 0, err
		}
		if dec.rerr != nil {
			return 0, dec.endError()
		}
		dec.fill()
	}
}

// took counts one value read at the current level: the innermost open container owes one fewer;
// a container head just read (owing n values) is opened inside it; containers that owe nothing
// more are closed.
func (dec *Decoder) took(n uint64) {
	if len(dec.open) > 0 {
		dec.open[len(dec.open)-1]--
	}
	if n > 0 {
		dec.open = append(dec.open, n)
	}
	for len(dec.open) > 0 && dec.open[len(dec.open)-1] == 0 {
		dec.open = dec.open[:len(dec.open)-1]
	}
}

// needByte reads until at least one byte is buffered, or reports why none will come.
func (dec *Decoder) needByte() error {
	for dec.start == dec.end {
		if dec.rerr != nil {
			return dec.endError()
		}
		dec.fill()
	}
	return nil
}

// InputOffset returns the stream offset of the first byte not yet decoded: after a successful
// Decode, the end of that value.
func (dec *Decoder) InputOffset() int64 { return dec.offset }

// Buffered returns the bytes read from the reader but not yet decoded. It is valid until the next
// call to Decode or Skip.
func (dec *Decoder) Buffered() io.Reader {
	return bytes.NewReader(dec.buf[dec.start:dec.end])
}

// More reports whether another value may follow: it reads until at least one byte is buffered or
// the reader fails. Called while a Decode is building a value (see ErrDecoderBusy) it reads
// nothing and reports false.
func (dec *Decoder) More() bool {
	if dec.busy {
		return false
	}
	for dec.start == dec.end && dec.rerr == nil {
		dec.fill()
	}
	return dec.start < dec.end
}

func (dec *Decoder) consume(n int) {
	dec.start += n
	dec.offset += int64(n)
	dec.scan = streamScan{owed: dec.scan.owed[:0]}
	if dec.start == dec.end {
		dec.start, dec.end = 0, 0
	}
}

// next makes sure one whole, checked value is buffered at buf[start:] and returns its length.
func (dec *Decoder) next() (int, error) {
	s := &dec.scan
	for {
		r := reader{
			data:     dec.buf[dec.start:dec.end],
			off:      s.pos,
			depth:    len(dec.open) + len(s.owed),
			lim:      dec.lim,
			maxDepth: depthCap(dec.lim.Depth),
			strict:   dec.opts.StrictUTF8,
			stream:   true,
			base:     dec.offset,
		}
		for !s.started || len(s.owed) > 0 {
			if r.off == len(r.data) {
				break // needs more input before the next token
			}
			t, err := r.head()
			if err != nil {
				if de, ok := err.(*DecodeError); ok && de.Kind == Truncated {
					break
				}
				return 0, err
			}
			s.started = true
			if len(s.owed) > 0 {
				s.owed[len(s.owed)-1]--
			}
			switch t.t {
			case StrType, BinType, ExtType:
				r.off += int(t.n)
			case ArrayType:
				if t.n > 0 {
					s.owed = append(s.owed, t.n)
				}
			case MapType:
				if t.n > 0 {
					s.owed = append(s.owed, 2*t.n)
				}
			}
			for len(s.owed) > 0 && s.owed[len(s.owed)-1] == 0 {
				s.owed = s.owed[:len(s.owed)-1]
			}
			s.pos = r.off
			r.depth = len(dec.open) + len(s.owed)
		}
		if s.started && len(s.owed) == 0 {
			return s.pos, nil
		}
		if dec.rerr != nil {
			return 0, dec.endError()
		}
		dec.fill()
	}
}

// endError is the error for a stream that ended: io.EOF between values, else what a one-shot
// decode of the rest reports (Truncated at the offset spec/README.md gives).
func (dec *Decoder) endError() error {
	if dec.rerr != io.EOF {
		return dec.rerr
	}
	if dec.start == dec.end {
		if len(dec.open) > 0 {
			// inside a container read by a header read: the stream is cut short
			return &DecodeError{Kind: Truncated, Offset: dec.offset}
		}
		return io.EOF
	}
	r := newReader(dec.buf[dec.start:dec.end], &dec.lim)
	r.strict, r.base, r.depth = dec.opts.StrictUTF8, dec.offset, len(dec.open)
	if err := r.skip(); err != nil {
		return err
	}
	return &DecodeError{Kind: Truncated, Offset: dec.offset + int64(dec.end-dec.start)}
}

var errNoProgress = errors.New("mpk: reader returned no data and no error 100 times")

// fill reads once more, making room first: unread bytes move to the front, and the buffer
// doubles only when the value being read fills it.
func (dec *Decoder) fill() {
	if dec.start > 0 && dec.end-dec.start < dec.start {
		n := copy(dec.buf, dec.buf[dec.start:dec.end])
		dec.start, dec.end = 0, n
	}
	if cap(dec.buf)-dec.end < streamReadSize {
		grown := make([]byte, max(2*cap(dec.buf), dec.end-dec.start+streamReadSize))
		n := copy(grown, dec.buf[dec.start:dec.end])
		dec.buf, dec.start, dec.end = grown, 0, n
	}
	dec.buf = dec.buf[:cap(dec.buf)]
	for i := 0; i < 100; i++ {
		n, err := dec.r.Read(dec.buf[dec.end:])
		dec.end += n
		if err != nil {
			dec.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	dec.rerr = errNoProgress
}

// An Encoder writes MessagePack values to an io.Writer, one Write per value.
type Encoder struct {
	w     io.Writer
	buf   []byte
	flags codecFlags
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// SetOptions sets the options used by the following calls to Encode.
func (enc *Encoder) SetOptions(o EncodeOptions) { enc.flags = o.flags() }

// Encode writes the encoding of v, as Marshal does.
func (enc *Encoder) Encode(v any) error {
	e := &encodeState{buf: enc.buf[:0], flags: enc.flags}
	e.encode(v)
	enc.buf = e.buf
	if cap(enc.buf) > pooledBufferMax {
		enc.buf = nil
	}
	if e.err != nil {
		return withPath(e.err, v, enc.flags)
	}
	_, err := enc.w.Write(e.buf)
	return err
}
