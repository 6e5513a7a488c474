package gentest

import (
	"bytes"
	"math/rand"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// marshaler is the method set of generated encoders.
type marshaler interface {
	MarshalMsg([]byte) ([]byte, error)
	Msgsize() int
}

// checkMarshalPaths encodes v through each of MarshalMsg's paths (no buffer: the scratch buffer
// for nested types, exact sizing for flat ones; a buffer with room; a full buffer) and compares
// each with Marshal. It returns the encoding from MarshalMsg(nil).
func checkMarshalPaths(t *testing.T, v marshaler) []byte {
	t.Helper()
	want, err := reflectOnly.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.MarshalMsg(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%T: MarshalMsg(nil) = %x, %v; Marshal gives %x", v, got, err, want)
	}
	for _, buf := range [][]byte{append(make([]byte, 0, 16), "abc"...), []byte("abc"), make([]byte, 0, 1)} {
		prefix := string(buf)
		out, err := v.MarshalMsg(buf)
		if err != nil || string(out[:len(prefix)]) != prefix || !bytes.Equal(out[len(prefix):], want) {
			t.Fatalf("%T: MarshalMsg(%q, cap %d) = %x, %v; want the prefix then %x", v, prefix, cap(buf), out, err, want)
		}
	}
	return got
}

// TestMarshalPathsMatchReflection runs random values of the generated types through every path
// of MarshalMsg, keeps every result of MarshalMsg(nil), and checks them all again at the end: a
// result must not share memory with the scratch buffer that later calls reuse.
func TestMarshalPathsMatchReflection(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	type kept struct {
		v    marshaler
		want []byte
		got  []byte
	}
	var all []kept
	for i := 0; i < 300; i++ {
		for _, v := range []marshaler{new(Product), new(Mixed), new(Order), new(Item)} {
			fill(rng, reflect.ValueOf(v).Elem(), 0)
			if m, ok := v.(*Mixed); ok {
				m.Gone = false
			}
			got := checkMarshalPaths(t, v)
			want, _ := reflectOnly.Marshal(v)
			all = append(all, kept{v, want, got})
		}
	}
	for i, k := range all {
		if !bytes.Equal(k.got, k.want) {
			t.Fatalf("result %d (%T) changed after later calls: %x, want %x", i, k.v, k.got, k.want)
		}
	}
}

// TestMarshalLargeThroughScratch encodes values larger than the scratch buffer keeps (64 KiB),
// then small ones: each result must stay what Marshal gives.
func TestMarshalLargeThroughScratch(t *testing.T) {
	var results [][]byte
	var values []*Order
	for _, n := range []int{100, 5000, 70000, 10, 300000, 20} {
		o := &Order{Id: int64(n), Note: strings.Repeat("x", n), Lines: []Item{{Sku: strings.Repeat("s", n/10), Qty: 3}}}
		values = append(values, o)
		results = append(results, checkMarshalPaths(t, o))
	}
	for i, o := range values {
		want, _ := reflectOnly.Marshal(o)
		if !bytes.Equal(results[i], want) {
			t.Fatalf("result %d changed after later calls", i)
		}
	}
}

// TestMarshalScratchConcurrent marshals from many goroutines at once (make test-go runs it under
// the race detector): every result must be its own value's encoding.
func TestMarshalScratchConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				o := &Order{Id: int64(g*1000 + i), Note: strings.Repeat("n", (g*37+i)%300), Lines: make([]Item, i%5)}
				got, err := o.MarshalMsg(nil)
				want, _ := reflectOnly.Marshal(o)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("goroutine %d, value %d: %x, %v; want %x", g, i, got, err, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}
