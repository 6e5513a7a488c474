package mpk

// Limits bounds what a decoder accepts. Every declared length is also checked against the bytes
// present before anything is allocated, so a one-shot decode is safe with the defaults; a stream
// fed by an untrusted peer should lower Str, Bin and Ext to what the application expects, because
// a stream buffers one incomplete value.
type Limits struct {
	Depth uint32 // containers enclosing a value, itself included; a top-level array is at depth 1 (at most MaxDepth)
	Str   uint32 // bytes of one str
	Bin   uint32 // bytes of one bin
	Ext   uint32 // payload bytes of one ext (timestamps included)
	Array uint32 // elements of one array
	Map   uint32 // key/value pairs of one map
}

// The default limits of spec/README.md: the length limits are the format's own maxima.
const (
	DefaultDepthLimit  = 1024
	DefaultLengthLimit = 4294967295
)

// MaxDepth caps Limits.Depth: decoding recurses once per level of nesting, and a deeper limit
// would let an input of a few megabytes exhaust the goroutine stack (a fatal error, not a panic).
// A Limits.Depth above it acts as MaxDepth: nesting beyond is a DepthLimit error.
const MaxDepth = 100000

// DefaultLimits returns the limits used when none are given.
func DefaultLimits() Limits {
	return Limits{
		Depth: DefaultDepthLimit,
		Str:   DefaultLengthLimit,
		Bin:   DefaultLengthLimit,
		Ext:   DefaultLengthLimit,
		Array: DefaultLengthLimit,
		Map:   DefaultLengthLimit,
	}
}
