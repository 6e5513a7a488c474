// Package mpk encodes and decodes MessagePack with the convenience of encoding/json: Marshal and
// Unmarshal work on any Go value, struct fields follow encoding/json's rules under `msgpack`
// tags, and every error names its kind and byte offset.
//
//	type Product struct {
//		Id    int64  `msgpack:"id"`
//		Name  string `msgpack:"name,omitempty"`
//	}
//
//	b, err := mpk.Marshal(&Product{Id: 1, Name: "shoe"}) // 82 a2 69 64 01 a4 6e 61 6d 65 ...
//	var p Product
//	err = mpk.Unmarshal(b, &p)
//
// The package has four layers, each usable alone:
//
//   - Marshal, Unmarshal and their options (EncodeOptions, DecodeOptions): reflection, with
//     codecs built once per type.
//   - Encoder and Decoder: consecutive values over an io.Writer / io.Reader; the Decoder checks
//     each token as its bytes arrive.
//   - The Append and Read functions (AppendInt, ReadString, Skip, ...): one value at a time on
//     a byte slice, without allocating, for hand-written codecs.
//   - Code written by cmd/mpkgen (MarshalMsg, UnmarshalMsg), which Marshal and Unmarshal use
//     for the types that have it.
//
// Types choose their own encoding through RegisterCodec, Marshaler/Unmarshaler, RegisterExt,
// encoding.BinaryMarshaler or encoding.TextMarshaler, in that order of precedence.
//
// Decoding is safe on hostile input with the default options: every declared length is checked
// against the bytes present (across all open containers), one decode allocates within a budget
// proportional to its input (DecodeOptions.MaxAlloc), and nesting is bounded (Limits.Depth, at
// most MaxDepth), so no input makes a decode crash, hang or exhaust memory.
//
// The README (go/README.md in the mpk repository) documents the type mapping, errors, limits,
// the generator and migration from vmihailenco/msgpack.
package mpk
