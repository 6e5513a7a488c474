package mpk

import (
	"math"
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// Unmarshal decodes the one MessagePack value in data into the value v points to, and returns a
// *DecodeError (with its Kind and Offset as spec/README.md defines them) if data is not exactly one
// well-formed value within the default limits.
//
// Unmarshal maps MessagePack onto Go types the reverse way Marshal does, converting where no
// information is lost: an int of any width into any int, uint or float kind that holds it; a
// float 32 or 64 into float32 or float64; an int into a float; a str or bin into a string or
// []byte; a bin of exactly N bytes into [N]byte; an array into a slice, an array or a struct
// (fields in order); a map into a map or a struct (fields matched by exact name; unknown names are
// skipped); nil into the zero value; the timestamp ext into time.Time (in UTC) or Timestamp.
//
// Into an `any`, Unmarshal stores nil, bool, int64 (uint64 for ints above math.MaxInt64),
// float32, float64, string, []byte, []any, map[string]any (map[any]any when a key is not a str,
// or always with DecodeOptions.MapAnyAny), time.Time for timestamps, a registered ext's Go type,
// or Ext.
//
// A value that does not fit its Go type is skipped and reported as an *UnmarshalTypeError after
// the rest has been decoded, unless a *DecodeError comes first; errors returned by an Unmarshaler
// or by an ext's unmarshal function (RegisterExt) are reported the same way. The destination is filled as
// decoding goes, so after an error it may be partly written: decode into a fresh value when that
// matters.
//
// Strings share memory: the strings and []byte decoded by one call are carved out of a few
// buffers (at most 4 KiB each, or one value's size), so one retained string keeps at most its
// buffer alive. DecodeOptions.CopyStrings gives each string its own allocation instead. Likewise
// the numbers and strings stored in an `any` share boxes: one retained keeps at most a chunk of
// 256 boxes alive.
func Unmarshal(data []byte, v any) error {
	if p, ok := v.(*any); ok && p != nil && *p == nil && len(data) <= smallAnyMax {
		if x, ok := decodeSmallAny(data); ok {
			*p = x
			return nil
		}
	}
	d := getDecodeState(data, &defaultLimits, false, 0)
	err := d.unmarshal(v)
	putDecodeState(d)
	return err
}

// DecodeOptions changes how values are decoded. The zero value is the default of Unmarshal.
type DecodeOptions struct {
	Limits      *Limits // nil means DefaultLimits()
	StrictUTF8  bool    // reject a str that is not valid UTF-8 (kind InvalidUTF8)
	JSONTags    bool    // use a field's `json` tag when it has no `msgpack` tag
	MapAnyAny   bool    // decode every map into an `any` as map[any]any
	CopyStrings bool    // give every decoded string and []byte its own allocation

	// DisallowUnknownFields makes a map key that names no field of the struct being decoded
	// (or an array element past an asarray struct's fields) an *UnknownFieldError, reported
	// like a type mismatch once the rest is decoded. By default such pairs are skipped.
	DisallowUnknownFields bool

	// TagName is the struct tag key to read instead of "msgpack" (with JSONTags, "json" is
	// still the fallback).
	TagName string

	// IgnoreGenerated decodes types with mpkgen's methods by reflection (Unmarshal's own rules
	// for values that do not fit, see the README), as any option other than the defaults does.
	IgnoreGenerated bool

	// MaxAlloc bounds the bytes one decode allocates: 0 means the default budget,
	// DefaultAllocBudget(len(data)), which is proportional to the input; a negative value means
	// no bound. Declared counts are already checked against the bytes present, across all open
	// containers, but a value can still allocate more than its encoding (a []T of n nils takes
	// n*sizeof(T) bytes for n input bytes); MaxAlloc caps that. Containers and pointers are
	// charged before they are allocated, strings and byte slices as they are copied; going over
	// is a LengthLimit error at the head of the value that went over (unless the input is
	// malformed: then its own error). Go only: the other mpk implementations have no such limit.
	MaxAlloc int64
}

// Unmarshal is Unmarshal with these options.
func (o DecodeOptions) Unmarshal(data []byte, v any) error {
	lim := o.Limits
	if lim == nil {
		lim = &defaultLimits
	}
	d := getDecodeState(data, lim, o.StrictUTF8, o.flags())
	d.mapAny, d.copyStrings, d.maxAlloc = o.MapAnyAny, o.CopyStrings, allocBudget(o.MaxAlloc, len(data))
	d.plain = d.plain && !o.MapAnyAny && !o.CopyStrings && o.MaxAlloc == 0
	err := d.unmarshal(v)
	putDecodeState(d)
	return err
}

func (o DecodeOptions) flags() codecFlags {
	f := tagFlags(o.TagName)
	if o.JSONTags {
		f |= flagJSONTags
	}
	if o.DisallowUnknownFields {
		f |= flagNoUnknown
	}
	if o.IgnoreGenerated {
		f |= flagNoGenerated
	}
	return f
}

// decodeState is the state of one decode: the reader, the first type error, and the string arena.
type decodeState struct {
	reader
	saved       error
	flags       codecFlags
	mapAny      bool
	copyStrings bool
	// The arena (see bytes) is a copy of d.data[arenaAt:arenaAt+len(arena)]; it is stored
	// only when a new copy is made, so a string costs no GC write barrier.
	arena     []byte
	arenaAt   int
	arenaNext int // the size of the next copy
	keys      keyCache
	// The chunks of boxes for the numbers and strings decoded into `any` (box.go), likewise a
	// chunk and a position.
	nums   []uint64
	numOff int
	strs   []string
	strOff int

	// The last top-level type and its decoder (see encodeState.lastType).
	lastType  reflect.Type
	lastFlags codecFlags
	lastDec   decoderFunc

	maxAlloc   int64 // the allocation budget (see allocBudget)
	allocated  int64
	startDepth int // containers enclosing data's value (UnmarshalPrefixNested)
	// plain: the options are the defaults, which generated code (mpkgen) assumes.
	plain    bool
	allocErr error // the budget ran out while copying a string: reported at the next charge
}

var decodeStatePool = sync.Pool{New: func() any { return new(decodeState) }}

func getDecodeState(data []byte, lim *Limits, strict bool, flags codecFlags) *decodeState {
	d := decodeStatePool.Get().(*decodeState)
	d.reader = newReader(data, lim)
	d.strict = strict
	d.saved, d.flags, d.mapAny, d.copyStrings, d.arena, d.arenaAt = nil, flags, false, false, nil, 0
	d.nums, d.numOff, d.strs, d.strOff, d.arenaNext = nil, 0, nil, 0, 0
	d.maxAlloc, d.allocated, d.allocErr, d.startDepth = DefaultAllocBudget(len(data)), 0, nil, 0
	d.plain = !strict && *lim == defaultLimits
	return d
}

func putDecodeState(d *decodeState) {
	d.data, d.arena, d.saved, d.nums, d.strs = nil, nil, nil, nil, nil
	decodeStatePool.Put(d)
}

func (d *decodeState) unmarshal(v any) error {
	if p, ok := v.(*any); ok && p != nil && *p == nil {
		x, err := d.decodeAny()
		if err != nil {
			return err
		}
		*p = x
		return d.finish()
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	t := rv.Type()
	if t != d.lastType || d.flags != d.lastFlags {
		d.lastType, d.lastFlags, d.lastDec = t, d.flags, typeDecoder(t.Elem(), d.flags)
	}
	if err := d.lastDec(d, rv.Elem()); err != nil {
		return err
	}
	return d.finish()
}

func (d *decodeState) finish() error {
	if d.allocErr != nil {
		return d.allocErr
	}
	if d.off < len(d.data) {
		return d.fail(TrailingBytes, d.off)
	}
	return d.saved
}

// save keeps err, the first error that does not stop decoding (a type mismatch, or an error from
// an Unmarshaler or an ext decoder): a later malformed byte is still reported first.
func (d *decodeState) save(err error) {
	if d.saved == nil {
		d.saved = err
	}
}

// mismatch records that the value at h does not fit type t, and skips it.
func (d *decodeState) mismatch(t tok, h int, typ reflect.Type) error {
	if d.saved == nil {
		d.saved = &UnmarshalTypeError{Value: t.describe(), Type: typ, Offset: d.base + int64(h)}
	}
	d.off = h
	return d.skip()
}

// DefaultAllocBudget is the bytes a decode of n input bytes may allocate when
// DecodeOptions.MaxAlloc is 0: 1 MiB plus 256 bytes per input byte. Decoding into `any` takes at
// most about 48 bytes per input byte, and a struct of 30 fields decoded from a map that carries
// one of them (omitempty) about 200; what goes over is a slice or pointer of large element types
// filled from nils or empty maps ([]struct{ B [4096]byte } from n nils: 4096 bytes per byte).
func DefaultAllocBudget(n int) int64 {
	return 1<<20 + 256*int64(n)
}

// allocBudget is the budget for DecodeOptions.MaxAlloc = max and an input of n bytes.
func allocBudget(max int64, n int) int64 {
	switch {
	case max == 0:
		return DefaultAllocBudget(n)
	case max < 0:
		return math.MaxInt64
	}
	return max
}

// charge counts n bytes about to be allocated for the value whose head is at h against the
// allocation budget.
func (d *decodeState) charge(n uint64, h int) error {
	if d.allocErr != nil {
		return d.allocErr
	}
	d.allocated += int64(min(n, 1<<62))
	if d.allocated > d.maxAlloc || n > 1<<62 || d.allocated < 0 {
		d.allocErr = d.refuse(LengthLimit, h)
		return d.allocErr
	}
	return nil
}

// refuse is the error for a decode that stops before allocating for the container or value at
// h: one whose declared count the bytes left cannot hold together with what the other open
// containers still owe (kind Truncated: the input is certainly cut short), or one over the
// allocation budget (LengthLimit). A malformed input gets its own first error, as spec/README.md
// orders them, found by a check of the whole input that allocates nothing, so the error never
// depends on the target type.
func (d *decodeState) refuse(k Kind, h int) error {
	r := newReader(d.data, &d.lim)
	r.strict, r.base, r.depth = d.strict, d.base, d.startDepth
	if err := r.skip(); err != nil {
		return err
	}
	return d.fail(k, h)
}

// tooMany reports whether the container head just read declares more elements than the bytes
// left can hold together with the elements the enclosing containers still owe.
func (d *decodeState) tooMany() bool {
	return d.open > len(d.data)
}

// arenaChunk bounds the memory one retained string can keep alive: strings are views of
// copies of the input of at most this size (or of exactly one string's size, when it is larger).
const arenaChunk = 4096

// arenaFirst is the size of the first copy of a decode and arenaSecond the least of the
// second (see bytesSlow): 256 then 1024, 2048 and 4096 bytes. The first copy was 512 bytes: a
// small document copied 512 bytes of input (keys and numbers included) for a few short strings
// (js_msgpack_lite_example: 40 bytes of strings, 4,096 B/op against msgp's 3,240; rb_image).
// Going from 256 straight to 1024 keeps the number of copies of a longer document where it was.
const (
	arenaFirst  = 256
	arenaSecond = 1024
)

// bytes returns a private copy of b, a slice of the input. The strings and byte slices of one
// decode are views of one copy of the input around them (the arena): at a string that is not in
// the current copy, what is left of the input from that string on (at most arenaChunk bytes) is
// copied in one allocation, and every later string that lies inside that copy is a view of it,
// without a copy of its own. A copy never holds more than what is left of the input, so a short
// message allocates once for all its strings. Views never overlap (each comes from its own bytes
// of the input) and the copy is never written after it is made, so the strings stay immutable.
//
// Measured (go/bench, CPU profile of Unmarshal into `any` of twitter and c_strings): copying each
// string into a cleared chunk spent about as long clearing chunks as copying strings, plus a
// memmove call per string; genrt.StringArena (generated code) works the same way. The chunk was
// also sized from d.off, which some callers had moved past b already and others not: a chunk of
// up to twice what was left (TestArenaChunkNotDoubleCounted).
func (d *decodeState) bytes(b []byte) []byte {
	n := len(b)
	if n == 0 {
		return []byte{} // a bin of 0 bytes is empty, not nil
	}
	if i := d.offsetOf(b) - d.arenaAt; i >= 0 && i <= len(d.arena)-n {
		return d.arena[i : i+n : i+n]
	}
	return d.bytesSlow(b)
}

// bytesSlow is bytes for a b outside the current copy: a new copy, or an allocation of b's own.
func (d *decodeState) bytesSlow(b []byte) []byte {
	n := len(b)
	at := d.offsetOf(b)
	if d.copyStrings || at < 0 {
		return append([]byte(nil), b...)[:n:n]
	}
	if n > arenaOwnMin {
		return d.ownBytes(b)
	}
	// The copies of one decode grow from arenaFirst to arenaChunk: a copy also holds the bytes
	// between strings, which may be a long string or bin that gets its own allocation, so a
	// message with a few short strings before a large bin copied up to 4 KiB of the bin for
	// nothing (rb_image, a 6 KiB bin after its name: callgrind, instructions per Unmarshal into
	// `any`, 9399 against msgp's 8600).
	grow := max(d.arenaNext, arenaFirst)
	d.arenaNext = min(max(2*grow, arenaSecond), arenaChunk)
	size := min(len(d.data)-at, max(grow, n))
	if d.charge(uint64(size), d.lastHead) != nil {
		return []byte{} // reported by the next charge or at the end
	}
	d.arena = append([]byte(nil), d.data[at:at+size]...)
	d.arenaAt = at
	return d.arena[:n:n]
}

// offsetOf is the offset of b in the input, or -1 when b is not inside it (callers pass
// slices of d.data; a -1 makes bytes copy b by itself).
func (d *decodeState) offsetOf(b []byte) int {
	at := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(d.data))))
	if at < 0 || at > len(d.data)-len(b) {
		return -1
	}
	return at
}

// arenaOwnMin: a string or bin longer than this that does not fit what is left of the arena
// chunk gets an allocation of its own instead of a new chunk. Carving long strings out of 4 KiB
// chunks left about half of each chunk unused and cleared every chunk before copying into it:
// Unmarshal of 1000 strings of 0-4 KiB into `any` allocated 4 MB for 2 MB of strings and ran at
// 0.4x tinylib/msgp's ReadIntfBytes, which allocates each string by itself.
const arenaOwnMin = 512

// ownBytes copies b into an allocation of its own (append to nil does not clear what it copies
// over), charged to the budget.
func (d *decodeState) ownBytes(b []byte) []byte {
	if d.charge(uint64(len(b)), d.lastHead) != nil {
		return []byte{} // reported by the next charge or at the end
	}
	out := append([]byte(nil), b...)
	return out[:len(b):len(b)]
}

// str returns b as a string, carved out of the arena (a copy of its own with CopyStrings, or
// when it is too long for the arena: strSlow). Not inlined: the arena check is here, so that a
// string in the arena costs one call, as it did when this called bytes.
func (d *decodeState) str(b []byte) string {
	if i := d.offsetOf(b) - d.arenaAt; i >= 0 && i <= len(d.arena)-len(b) {
		return unsafeString(d.arena[i : i+len(b) : i+len(b)])
	}
	return d.strSlow(b)
}

// strSlow is str for a b outside the current arena copy. A string that gets an allocation of its
// own (longer than arenaOwnMin, or with CopyStrings) is copied by copyString; a shorter one
// starts a new arena copy, as bytes does.
func (d *decodeState) strSlow(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if d.copyStrings || d.offsetOf(b) < 0 {
		return copyString(b)
	}
	if n > arenaOwnMin {
		if d.charge(uint64(n), d.lastHead) != nil {
			return "" // reported by the next charge or at the end
		}
		return copyString(b)
	}
	return unsafeString(d.bytesSlow(b))
}

// copyString returns a copy of b as a string in an allocation of its own: string(b), the
// runtime's rawstring, which allocates exactly len(b) bytes and does not clear them before the
// copy. It is only for strings: the runtime may hand out shared read-only memory for a string
// (one of 0 or 1 byte today), so a []byte that could be written must not be made this way.
//
// Measured (callgrind, cmd/prof's loop with GOGC=off, instructions per Unmarshal into `any`):
// the former copy of a long string, append([]byte(nil), b...) viewed as a string, went through
// growslice, which rounds the allocation up to its size class and clears the part past len(b)
// (memclrNoHeapPointers: 18.5k of strings4k's 866k instructions) with about twice rawstring's
// bookkeeping; the counts before and after are in go/bench/README.md ("Unmarshal cells below
// the bar"). copyStringAppend is the former way, taken when copyNoClear is false (tests run
// both).
func copyString(b []byte) string {
	if !copyNoClear {
		return copyStringAppend(b)
	}
	return string(b)
}

// copyNoClear selects copyString's rawstring; tests turn it off to run the fallback.
var copyNoClear = true

// copyStringAppend is copyString by append to nil (a copy in a []byte viewed as a string).
func copyStringAppend(b []byte) string {
	return unsafeString(append([]byte(nil), b...))
}

// unsafeString views b as a string. The arenas never write a region again after handing it
// out, so the string stays immutable.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// decoderFunc decodes the value at d.off into v, which is settable. It returns only errors that
// stop decoding (a *DecodeError, or an Unmarshaler's error); type mismatches are saved.
type decoderFunc func(d *decodeState, v reflect.Value) error

var decoderCache sync.Map // codecKey -> decoderFunc

func typeDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	key := codecKey{t, flags}
	if f, ok := decoderCache.Load(key); ok {
		return f.(decoderFunc)
	}
	var (
		wg sync.WaitGroup
		f  decoderFunc
	)
	wg.Add(1)
	fi, loaded := decoderCache.LoadOrStore(key, decoderFunc(func(d *decodeState, v reflect.Value) error {
		wg.Wait()
		return f(d, v)
	}))
	if loaded {
		return fi.(decoderFunc)
	}
	f = newTypeDecoder(t, flags)
	wg.Done()
	decoderCache.Store(key, f)
	return f
}

var unmarshalerType = reflect.TypeFor[Unmarshaler]()

func newTypeDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	if c := codecFor(t); c != nil && c.decode != nil {
		return customDecoder(c)
	}
	if flags == 0 && isGenerated(t) {
		return generatedDecoder(newStructDecoder(t, flags))
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return unmarshalerDecoder
	}
	if c := extByGoType(t); c != nil {
		return extCodecDecoder(c)
	}
	switch t {
	case timeType:
		return timeDecoder
	case timestampType:
		return timestampDecoder
	case extType:
		return extValueDecoder
	case rawType:
		return rawDecoder
	}
	if dec := stdDecoder(t); dec != nil {
		return dec
	}
	switch t.Kind() {
	case reflect.Bool:
		return boolDecoder
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intDecoder
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintDecoder
	case reflect.Float32, reflect.Float64:
		return floatDecoder
	case reflect.String:
		return stringDecoder
	case reflect.Interface:
		return interfaceDecoder
	case reflect.Pointer:
		return pointerDecoder(t, flags)
	case reflect.Struct:
		return newStructDecoder(t, flags)
	case reflect.Map:
		return mapDecoder(t, flags)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implementsAny(t.Elem()) {
			return bytesDecoder
		}
		return sliceDecoder(t, flags)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && !implementsAny(t.Elem()) {
			return byteArrayDecoder
		}
		return arrayDecoder(t, flags)
	}
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		t, err := d.head()
		if err != nil {
			return err
		}
		return d.mismatch(t, h, v.Type())
	}
}

func unmarshalerDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	if err := d.skip(); err != nil {
		return err
	}
	if d.data[h] == mNil && v.Kind() == reflect.Pointer {
		v.SetZero()
		return nil
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		v.Set(reflect.New(v.Type().Elem()))
	}
	if err := v.Addr().Interface().(Unmarshaler).UnmarshalMsgpack(d.data[h:d.off]); err != nil {
		d.save(err)
	}
	return nil
}

func extCodecDecoder(c *extCodec) decoderFunc {
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		t, err := d.head()
		if err != nil {
			return err
		}
		switch {
		case t.t == NilType:
			v.SetZero()
			return nil
		case t.t != ExtType || t.ext != c.typ:
			return d.mismatch(t, h, v.Type())
		}
		payload := d.data[d.off : d.off+int(t.n)]
		d.off += int(t.n)
		x, err := c.decode(payload)
		if err != nil {
			d.save(err)
			return nil
		}
		v.Set(x)
		return nil
	}
}

func timeDecoder(d *decodeState, v reflect.Value) error { return decodeTimestamp(d, v, true) }

func timestampDecoder(d *decodeState, v reflect.Value) error { return decodeTimestamp(d, v, false) }

// decodeTimestamp reads a timestamp ext (or nil, which zeroes v) into a time.Time when asTime,
// else into a Timestamp, which holds seconds beyond what time.Time can.
func decodeTimestamp(d *decodeState, v reflect.Value, asTime bool) error {
	h := d.off
	t, err := d.head()
	if err != nil {
		return err
	}
	switch {
	case t.t == NilType:
		v.SetZero()
		return nil
	case t.t != ExtType || t.ext != TimestampExt:
		return d.mismatch(t, h, v.Type())
	}
	sec, nsec, _ := parseTimestamp(d.data[d.off : d.off+int(t.n)])
	if asTime && sec > maxTimeSec {
		return d.mismatch(t, h, v.Type())
	}
	d.off += int(t.n)
	if asTime {
		v.Set(reflect.ValueOf(time.Unix(sec, int64(nsec)).UTC()))
	} else {
		v.Set(reflect.ValueOf(Timestamp{Sec: sec, Nsec: nsec}))
	}
	return nil
}

func extValueDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	t, err := d.head()
	if err != nil {
		return err
	}
	switch t.t {
	case NilType:
		v.SetZero()
		return nil
	case ExtType:
		data := d.bytes(d.data[d.off : d.off+int(t.n)])
		d.off += int(t.n)
		v.Set(reflect.ValueOf(Ext{Type: t.ext, Data: data}))
		return nil
	}
	return d.mismatch(t, h, v.Type())
}

func rawDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	if err := d.skip(); err != nil {
		return err
	}
	if err := d.charge(uint64(d.off-h), h); err != nil {
		return err
	}
	v.SetBytes(append([]byte(nil), d.data[h:d.off]...))
	return nil
}

func boolDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	t, err := d.head()
	if err != nil {
		return err
	}
	switch t.t {
	case BoolType:
		v.SetBool(t.n != 0)
	case NilType:
		v.SetBool(false)
	default:
		return d.mismatch(t, h, v.Type())
	}
	return nil
}

func intDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	if h < len(d.data) && d.data[h] <= 0x7f {
		v.SetInt(int64(d.data[h]))
		d.off++
		return nil
	}
	t, err := d.head()
	if err != nil {
		return err
	}
	switch t.t {
	case IntType:
		if (t.neg || t.n <= math.MaxInt64) && !v.OverflowInt(int64(t.n)) {
			v.SetInt(int64(t.n))
			return nil
		}
	case NilType:
		v.SetInt(0)
		return nil
	}
	return d.mismatch(t, h, v.Type())
}

func uintDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	if h < len(d.data) && d.data[h] <= 0x7f {
		v.SetUint(uint64(d.data[h]))
		d.off++
		return nil
	}
	t, err := d.head()
	if err != nil {
		return err
	}
	switch t.t {
	case IntType:
		if !t.neg && !v.OverflowUint(t.n) {
			v.SetUint(t.n)
			return nil
		}
	case NilType:
		v.SetUint(0)
		return nil
	}
	return d.mismatch(t, h, v.Type())
}

func floatDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	t, err := d.head()
	if err != nil {
		return err
	}
	var f float64
	switch t.t {
	case Float64Type:
		f = math.Float64frombits(t.n)
		if v.Kind() == reflect.Float32 && float64(float32(f)) != f && !math.IsNaN(f) {
			return d.mismatch(t, h, v.Type()) // a float64 that float32 cannot hold exactly
		}
	case Float32Type:
		f = float64(math.Float32frombits(uint32(t.n)))
	case IntType:
		if t.neg {
			f = float64(int64(t.n))
		} else {
			f = float64(t.n)
		}
	case NilType:
	default:
		return d.mismatch(t, h, v.Type())
	}
	v.SetFloat(f)
	return nil
}

func stringDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	if b, ok := d.strFast(); ok {
		v.SetString(d.str(b))
		return nil
	}
	t, err := d.head()
	if err != nil {
		return err
	}
	switch t.t {
	case StrType, BinType:
		end := d.off + int(t.n)
		v.SetString(d.str(d.data[d.off:end]))
		d.off = end
		return nil
	case NilType:
		v.SetString("")
		return nil
	}
	return d.mismatch(t, h, v.Type())
}

func bytesDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	t, err := d.head()
	if err != nil {
		return err
	}
	switch t.t {
	case StrType, BinType:
		end := d.off + int(t.n)
		v.SetBytes(d.bytes(d.data[d.off:end]))
		d.off = end
		return nil
	case NilType:
		v.SetZero()
		return nil
	}
	return d.mismatch(t, h, v.Type())
}

func byteArrayDecoder(d *decodeState, v reflect.Value) error {
	h := d.off
	t, err := d.head()
	if err != nil {
		return err
	}
	switch {
	case t.t == NilType:
		v.SetZero()
		return nil
	case (t.t == BinType || t.t == StrType) && int(t.n) == v.Len():
		reflect.Copy(v, reflect.ValueOf(d.data[d.off:d.off+int(t.n)]))
		d.off += int(t.n)
		return nil
	}
	return d.mismatch(t, h, v.Type())
}

func pointerDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	var elemDec decoderFunc
	var once sync.Once
	return func(d *decodeState, v reflect.Value) error {
		if d.off < len(d.data) && d.data[d.off] == mNil {
			d.off++
			v.SetZero()
			return nil
		}
		once.Do(func() { elemDec = typeDecoder(t.Elem(), flags) })
		if v.IsNil() {
			if err := d.charge(uint64(t.Elem().Size()), d.off); err != nil {
				return err
			}
			v.Set(reflect.New(t.Elem()))
		}
		return elemDec(d, v.Elem())
	}
}

func interfaceDecoder(d *decodeState, v reflect.Value) error {
	if !v.IsNil() {
		// Decode into the value a non-nil pointer held by the interface points to, as
		// encoding/json does, unless the input is nil.
		if e := v.Elem(); e.Kind() == reflect.Pointer && !e.IsNil() &&
			(d.off >= len(d.data) || d.data[d.off] != mNil) {
			return typeDecoder(e.Type().Elem(), d.flags)(d, e.Elem())
		}
	}
	if v.NumMethod() != 0 {
		h := d.off
		t, err := d.head()
		if err != nil {
			return err
		}
		if t.t == NilType {
			v.SetZero()
			return nil
		}
		return d.mismatch(t, h, v.Type())
	}
	x, err := d.decodeAny()
	if err != nil {
		return err
	}
	if x == nil {
		v.SetZero()
	} else if p, ok := v.Addr().Interface().(*any); ok {
		*p = x
	} else {
		v.Set(reflect.ValueOf(x))
	}
	return nil
}

func sliceDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	var elemDec decoderFunc
	var once sync.Once
	elemOp := opFor(t.Elem())
	elemSize := t.Elem().Size()
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		tk, err := d.head()
		if err != nil {
			return err
		}
		switch tk.t {
		case NilType:
			v.SetZero()
			return nil
		case ArrayType:
		default:
			return d.mismatch(tk, h, v.Type())
		}
		once.Do(func() { elemDec = typeDecoder(t.Elem(), flags) })
		n := int(tk.n)
		if v.Cap() < n || v.IsNil() {
			if d.tooMany() {
				return d.refuse(Truncated, h)
			}
			if err := d.charge(uint64(n)*uint64(elemSize), h); err != nil {
				return err
			}
		}
		floor := d.floor
		d.floor = d.open
		if v.Cap() >= n && !v.IsNil() {
			v.SetLen(n)
			// Elements are decoded as if into fresh values.
			for i := 0; i < n; i++ {
				v.Index(i).SetZero()
			}
		} else {
			// Grow allocates the backing array in place; reflect.MakeSlice would also put a
			// slice header on the heap, one more allocation per slice.
			if n == 0 {
				v.Set(reflect.MakeSlice(t, 0, 0)) // empty, not nil
			} else {
				v.SetLen(0)
				v.Grow(n)
				v.SetLen(n)
			}
		}
		d.depth++
		if elemOp != opGeneric && n > 0 {
			// Elements of a plain kind are written through their address, as struct fields are.
			p := v.UnsafePointer()
			for i := 0; i < n; i++ {
				if err := decodeOp(d, elemOp, unsafe.Add(p, uintptr(i)*elemSize), t.Elem()); err != nil {
					return err
				}
			}
		} else {
			for i := 0; i < n; i++ {
				if err := elemDec(d, v.Index(i)); err != nil {
					return err
				}
			}
		}
		d.depth--
		d.floor = floor
		return nil
	}
}

func arrayDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	var elemDec decoderFunc
	var once sync.Once
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		tk, err := d.head()
		if err != nil {
			return err
		}
		switch tk.t {
		case NilType:
			v.SetZero()
			return nil
		case ArrayType:
		default:
			return d.mismatch(tk, h, v.Type())
		}
		once.Do(func() { elemDec = typeDecoder(t.Elem(), flags) })
		d.depth++
		floor := d.floor
		d.floor = d.open
		for i := 0; i < int(tk.n); i++ {
			if i < v.Len() {
				if err := elemDec(d, v.Index(i)); err != nil {
					return err
				}
			} else if err := d.skip(); err != nil {
				return err
			}
		}
		for i := int(tk.n); i < v.Len(); i++ {
			v.Index(i).SetZero()
		}
		d.depth--
		d.floor = floor
		return nil
	}
}

func mapDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	var keyDec, valDec decoderFunc
	var once sync.Once
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		tk, err := d.head()
		if err != nil {
			return err
		}
		switch tk.t {
		case NilType:
			v.SetZero()
			return nil
		case MapType:
		default:
			return d.mismatch(tk, h, v.Type())
		}
		once.Do(func() {
			keyDec = typeDecoder(t.Key(), flags)
			valDec = typeDecoder(t.Elem(), flags)
		})
		n := int(tk.n)
		if d.tooMany() {
			return d.refuse(Truncated, h)
		}
		made := v.IsNil()
		if made {
			hint := min(n, maxMapPresize)
			if err := d.charge(uint64(hint)*uint64(t.Key().Size()+t.Elem().Size()+8), h); err != nil {
				return err
			}
			v.Set(reflect.MakeMapWithSize(t, hint))
		}
		d.depth++
		floor := d.floor
		d.floor = d.open
		key := reflect.New(t.Key()).Elem()
		val := reflect.New(t.Elem()).Elem()
		for i := 0; i < n; i++ {
			key.SetZero()
			if err := keyDec(d, key); err != nil {
				return err
			}
			val.SetZero()
			if err := valDec(d, val); err != nil {
				return err
			}
			if key.Kind() == reflect.Interface && !key.IsNil() && !key.Elem().Type().Comparable() {
				if d.saved == nil {
					d.saved = &UnmarshalTypeError{Value: "unhashable map key", Type: t.Key(), Offset: d.base + int64(h)}
				}
				continue
			}
			v.SetMapIndex(key, val)
		}
		d.depth--
		d.floor = floor
		if made && n > sparseMapMin && v.Len() < n/2 {
			v.Set(resizedMap(v))
		}
		return nil
	}
}

// maxMapPresize bounds the room a decoded map is made with: a map of more pairs grows as its
// distinct keys arrive, so its tables follow what the input holds rather than what it declares.
const maxMapPresize = 4096

// sparseMapMin is the count above which a map made for n pairs that received fewer than n/2
// distinct keys (duplicates) is copied into one sized for what it holds: a map keeps the room it
// was made with, so valid input repeating one key would otherwise keep tables sized for every
// pair it declared.
const sparseMapMin = 16

// resizedMap returns a copy of the map m sized for its length.
func resizedMap(m reflect.Value) reflect.Value {
	out := reflect.MakeMapWithSize(m.Type(), m.Len())
	for it := m.MapRange(); it.Next(); {
		out.SetMapIndex(it.Key(), it.Value())
	}
	return out
}
