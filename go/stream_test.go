package mpk

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
)

func TestStreamConsecutiveValues(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	values := []any{int64(1), "two", []any{int64(3), nil}, map[string]any{"four": 4.5}}
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	whole := buf.Bytes()
	for size := 1; size <= len(whole); size++ {
		dec := NewDecoder(&chunked{data: whole, size: size})
		var offsets []int64
		for i := range values {
			var got any
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("chunks of %d, value %d: %v", size, i, err)
			}
			offsets = append(offsets, dec.InputOffset())
		}
		var extra any
		if err := dec.Decode(&extra); err != io.EOF {
			t.Fatalf("chunks of %d: after the last value got %v", size, err)
		}
		if want := []int64{1, 5, 8, int64(len(whole))}; !equalInts(offsets, want) {
			t.Fatalf("chunks of %d: offsets %v, want %v", size, offsets, want)
		}
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

type chunked struct {
	data []byte
	size int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.data)
	c.data = c.data[n:]
	return n, nil
}

func TestStreamErrorOffsetsCountFromStreamStart(t *testing.T) {
	// c0, then a str of 4 over a limit of 3 at offset 1.
	dec := NewDecoder(bytes.NewReader([]byte{0xc0, 0xa4, 'a', 'b', 'c', 'd'}))
	lim := DefaultLimits()
	lim.Str = 3
	dec.SetOptions(DecodeOptions{Limits: &lim})
	var v any
	if err := dec.Decode(&v); err != nil || v != nil {
		t.Fatalf("first value: %v %v", v, err)
	}
	err := dec.Decode(&v)
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != LengthLimit || de.Offset != 1 {
		t.Fatalf("got %v", err)
	}
}

// TestStreamRejectsEarly checks that a str over its limit is refused from its head, before its
// payload has been buffered: the reader would block forever otherwise.
func TestStreamRejectsEarly(t *testing.T) {
	pr, pw := io.Pipe()
	go pw.Write([]byte{0xdb, 0x7f, 0xff, 0xff, 0xff}) // str 32 of 2 GiB, no payload sent
	dec := NewDecoder(pr)
	lim := DefaultLimits()
	lim.Str = 1 << 20
	dec.SetOptions(DecodeOptions{Limits: &lim})
	var s string
	err := dec.Decode(&s)
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != LengthLimit || de.Offset != 0 {
		t.Fatalf("got %v", err)
	}
	pw.Close()
}

func TestStreamTruncatedAtEnd(t *testing.T) {
	dec := NewDecoder(bytes.NewReader([]byte{0x92, 0xa1, 0x61}))
	var v any
	err := dec.Decode(&v)
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != Truncated || de.Offset != 3 {
		t.Fatalf("got %v", err)
	}
}

// TestStreamConcurrentPipes runs writers and decoders on their own goroutines (the race detector
// checks that a Decoder touches only its own state, and that decoded values outlive its buffer).
func TestStreamConcurrentPipes(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		pr, pw := io.Pipe()
		wg.Add(2)
		go func() {
			defer wg.Done()
			enc := NewEncoder(pw)
			for i := 0; i < 200; i++ {
				enc.Encode(product{Id: int64(i), Name: "name", Colors: []string{"red", "green"}})
			}
			pw.Close()
		}()
		go func() {
			defer wg.Done()
			dec := NewDecoder(pr)
			var kept []product
			for {
				var p product
				err := dec.Decode(&p)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Error(err)
					return
				}
				kept = append(kept, p)
			}
			for i, p := range kept {
				if p.Id != int64(i) || p.Name != "name" || p.Colors[1] != "green" {
					t.Errorf("value %d: %+v", i, p)
					return
				}
			}
			if len(kept) != 200 {
				t.Errorf("got %d values", len(kept))
			}
		}()
	}
	wg.Wait()
}

func TestStreamBuffered(t *testing.T) {
	dec := NewDecoder(bytes.NewReader([]byte{0x01, 0x02, 0x03}))
	var v int
	if err := dec.Decode(&v); err != nil || v != 1 {
		t.Fatal(v, err)
	}
	rest, _ := io.ReadAll(dec.Buffered())
	if !bytes.Equal(rest, []byte{0x02, 0x03}) || !dec.More() {
		t.Fatalf("buffered %x", rest)
	}
	if err := dec.Skip(); err != nil || dec.InputOffset() != 2 {
		t.Fatal(err, dec.InputOffset())
	}
}

// headOnly gives its bytes in one Read and fails the test's decode if asked for more.
type headOnly struct{ data []byte }

var errReadPastHead = errors.New("read past the bytes that prove the error")

func (h *headOnly) Read(p []byte) (int, error) {
	if len(h.data) == 0 {
		return 0, errReadPastHead
	}
	n := copy(p, h.data)
	h.data = h.data[n:]
	return n, nil
}

// TestStreamInvalidTimestampAtHead: an ext -1 whose length no timestamp has is reported from its
// head, without waiting for (or buffering) a payload of up to 4 GiB.
func TestStreamInvalidTimestampAtHead(t *testing.T) {
	for _, c := range []struct {
		head []byte
		at   int64
	}{
		{[]byte{0xc9, 0xff, 0xff, 0xff, 0xff, 0xff}, 0}, // ext 32 of 4294967295 bytes
		{[]byte{0xc7, 0x05, 0xff}, 0},                   // ext 8 of 5 bytes
		{[]byte{0xd8, 0xff}, 0},                         // fixext 16
		{[]byte{0x92, 0x01, 0xc8, 0x00, 0x10, 0xff}, 2}, // inside an array
	} {
		head, at := c.head, c.at
		dec := NewDecoder(&headOnly{data: head})
		var v any
		err := dec.Decode(&v)
		var de *DecodeError
		if !errors.As(err, &de) || de.Kind != InvalidTimestamp || de.Offset != at {
			t.Errorf("% x: got %v, want invalid_timestamp at %d", head, err, at)
		}
	}
	// A timestamp length waits for its payload.
	dec := NewDecoder(&headOnly{data: []byte{0xd6, 0xff, 0x00}})
	var v any
	if err := dec.Decode(&v); err != errReadPastHead {
		t.Errorf("timestamp 32 cut off: got %v, want the reader's error", err)
	}
}
