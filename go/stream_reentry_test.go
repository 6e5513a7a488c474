package mpk_test

import (
	"bytes"
	"errors"
	"testing"

	mpk "mpk.dev/go/mpk"
)

// reentrant is an Unmarshaler that calls back into the Decoder decoding it (reentryDec, with
// reentryCall; the tests using them do not run in parallel).
type reentrant struct {
	err error
	raw []byte
}

var (
	reentryDec  *mpk.Decoder
	reentryCall func(*mpk.Decoder) error
)

func (r *reentrant) UnmarshalMsgpack(b []byte) error {
	r.raw = append([]byte(nil), b...)
	r.err = reentryCall(reentryDec)
	return nil
}

func TestDecoderRefusesCallsFromInsideItsDecode(t *testing.T) {
	calls := map[string]func(*mpk.Decoder) error{
		"Decode": func(d *mpk.Decoder) error { var v any; return d.Decode(&v) },
		"Skip":   func(d *mpk.Decoder) error { return d.Skip() },
		"PeekType": func(d *mpk.Decoder) error {
			_, err := d.PeekType()
			return err
		},
		"ReadArrayHeader": func(d *mpk.Decoder) error {
			_, err := d.ReadArrayHeader()
			return err
		},
		"ReadMapHeader": func(d *mpk.Decoder) error {
			_, err := d.ReadMapHeader()
			return err
		},
		"More": func(d *mpk.Decoder) error {
			if d.More() {
				return errors.New("More reported true from inside Decode")
			}
			return mpk.ErrDecoderBusy
		},
	}
	first, _ := mpk.Marshal([]any{"first", 1, []any{2, 3}})
	second, _ := mpk.Marshal("second")
	third, _ := mpk.Marshal(map[string]any{"k": "third"})
	stream := append(append(append([]byte(nil), first...), second...), third...)
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			dec := mpk.NewDecoder(bytes.NewReader(stream))
			reentryDec, reentryCall = dec, call
			var got []*reentrant // three Unmarshalers: each one's method calls the Decoder
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("outer Decode: %v", err)
			}
			if len(got) != 3 {
				t.Fatalf("got %d elements", len(got))
			}
			for i, r := range got {
				if !errors.Is(r.err, mpk.ErrDecoderBusy) {
					t.Errorf("element %d: the inner %s gave %v, want ErrDecoderBusy", i, name, r.err)
				}
			}
			// the running Decode was unharmed and the stream goes on where it should
			if string(got[0].raw) != string(mustMarshal(t, "first")) || string(got[2].raw) != string(mustMarshal(t, []any{2, 3})) {
				t.Errorf("elements got %x, %x", got[0].raw, got[2].raw)
			}
			var v any
			if err := dec.Decode(&v); err != nil || v != "second" {
				t.Fatalf("next Decode: %#v, %v", v, err)
			}
			var m map[string]any
			if err := dec.Decode(&m); err != nil || m["k"] != "third" {
				t.Fatalf("last Decode: %#v, %v", m, err)
			}
		})
	}
}

type panicky struct{}

func (panicky) UnmarshalMsgpack([]byte) error { panic("boom") }

func TestDecoderUsableAfterAMethodItCalledPanicked(t *testing.T) {
	a, _ := mpk.Marshal(1)
	b, _ := mpk.Marshal(2)
	dec := mpk.NewDecoder(bytes.NewReader(append(a, b...)))
	func() {
		defer func() { _ = recover() }()
		var p panicky
		_ = dec.Decode(&p)
	}()
	var v any
	if err := dec.Decode(&v); errors.Is(err, mpk.ErrDecoderBusy) {
		t.Fatalf("after a panic inside Decode the Decoder still says busy")
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := mpk.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
