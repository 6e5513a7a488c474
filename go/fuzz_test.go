package mpk_test

import (
	"bytes"
	"errors"
	"testing"

	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/internal/typed"
)

// addCorpusSeeds seeds a fuzz target with every input of the corpus, valid and invalid.
func addCorpusSeeds(f *testing.F) {
	for _, path := range corpusFiles(f) {
		for _, c := range loadCases(f, path) {
			for _, form := range c.Forms {
				f.Add(form)
			}
			if c.Forms == nil && c.EncodeError == "" {
				f.Add(c.Input)
			}
		}
	}
}

// FuzzDecode checks that every decoding path agrees on every input: Unmarshal into RawMessage
// and into `any`, Skip, the low-level reader and the stream fed one byte at a time; and that a
// decoded value encodes and decodes again.
func FuzzDecode(f *testing.F) {
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw mpk.RawMessage
		rawErr := mpk.Unmarshal(data, &raw)
		var x any
		anyErr := mpk.Unmarshal(data, &x)
		var de *mpk.DecodeError
		if rawErr != nil {
			if !errors.As(rawErr, &de) {
				t.Fatalf("RawMessage: not a DecodeError: %v", rawErr)
			}
			var de2 *mpk.DecodeError
			if !errors.As(anyErr, &de2) || *de2 != *de {
				t.Fatalf("RawMessage says %v, any says %v", rawErr, anyErr)
			}
			if de.Offset < 0 || de.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the input of %d bytes", de.Offset, len(data))
			}
		} else if !bytes.Equal(raw, data) {
			t.Fatalf("RawMessage %x of %x", raw, data)
		}

		rest, skipErr := mpk.Skip(data)
		switch {
		case rawErr == nil && (skipErr != nil || len(rest) != 0):
			t.Fatalf("Skip: %v, %d left, on a valid input", skipErr, len(rest))
		case rawErr != nil && de.Kind == mpk.TrailingBytes:
			if skipErr != nil || int64(len(data)-len(rest)) != de.Offset {
				t.Fatalf("Skip on trailing bytes: %v, %d left", skipErr, len(rest))
			}
		case rawErr != nil:
			var sde *mpk.DecodeError
			if !errors.As(skipErr, &sde) || *sde != *de {
				t.Fatalf("Skip says %v, Unmarshal says %v", skipErr, rawErr)
			}
		}
		if rawErr != nil {
			return
		}

		v, rest, err := typed.Decode(data)
		if err != nil || len(rest) != 0 {
			t.Fatalf("reader: %v, %d left, on a valid input", err, len(rest))
		}
		if re, err := typed.Encode(nil, v); err != nil {
			t.Fatalf("re-encoding %x: %v", data, err)
		} else if len(re) > len(data) {
			t.Fatalf("re-encoding %x gave the longer %x: not shortest form", data, re)
		}
		if !streamOnce(t, "fuzz", &oneByteReader{data}, data, mpk.DecodeOptions{}) {
			t.FailNow()
		}
		if anyErr == nil {
			b, err := mpk.Marshal(x)
			if err != nil {
				t.Fatalf("Marshal of a decoded value: %v", err)
			}
			var y any
			if err := mpk.Unmarshal(b, &y); err != nil {
				t.Fatalf("decoding %x (from %x): %v", b, data, err)
			}
		}
	})
}

// FuzzLimits decodes with small limits and strict UTF-8: Unmarshal into RawMessage and into
// `any` must report the same malformed-input error, and never panic.
func FuzzLimits(f *testing.F) {
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := mpk.Limits{Depth: 3, Str: 8, Bin: 8, Ext: 16, Array: 4, Map: 4}
		opts := mpk.DecodeOptions{Limits: &lim, StrictUTF8: true}
		var raw mpk.RawMessage
		err := opts.Unmarshal(data, &raw)
		var x any
		err2 := opts.Unmarshal(data, &x)
		// An `any` may also meet a type error (an unhashable map key); the malformed-input errors
		// must be the same.
		var de, de2 *mpk.DecodeError
		if errors.As(err, &de) != errors.As(err2, &de2) || (de != nil && *de != *de2) {
			t.Fatalf("RawMessage: %v, any: %v", err, err2)
		}
		if err == nil && !bytes.Equal(raw, data) {
			t.Fatalf("RawMessage %x of %x", raw, data)
		}
	})
}
