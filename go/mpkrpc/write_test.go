package mpkrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"mpk.dev/go/mpk"
)

// Many goroutines sending large messages at once: their writes are batched behind the one in
// progress (write); every call must get its own reply, whole, on both sides.
func TestEndpointConcurrentLargeWrites(t *testing.T) {
	a, b := pair(t, nil, nil)
	b.Register("echo", func(p []byte) []byte { return p })
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				in := bytes.Repeat([]byte{byte(g), byte(i)}, 4096+g*37)
				var out []byte
				if err := a.CallInto(ctx, &out, "echo", in); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(in, out) {
					errs <- fmt.Errorf("goroutine %d call %d: wrong echo (%d bytes)", g, i, len(out))
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// failingConn accepts `left` bytes, then every Write fails; reads block until Close.
type failingConn struct {
	mu     sync.Mutex
	left   int
	closed chan struct{}
	once   sync.Once
}

var errWriteBroken = errors.New("write broken")

func (c *failingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(b) > c.left {
		return 0, errWriteBroken
	}
	c.left -= len(b)
	time.Sleep(time.Millisecond) // let other senders queue behind this write
	return len(b), nil
}

func (c *failingConn) Read([]byte) (int, error) {
	<-c.closed
	return 0, io.EOF
}

func (c *failingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// A failed Write fails its call and every call queued behind it with the write's error: none
// waits for a reply that was never sent.
func TestEndpointWriteFailureFailsQueuedCalls(t *testing.T) {
	c := &failingConn{left: 3000, closed: make(chan struct{})}
	ep := New(c, nil)
	defer ep.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ep.Call(ctx, "f", bytes.Repeat([]byte{1}, 500))
			if errors.Is(err, errWriteBroken) {
				mu.Lock()
				failed++
				mu.Unlock()
			} else if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("call: %v (want the write's error, or none sent at all)", err)
			}
		}()
	}
	// The calls whose bytes were written wait for replies that never come: end them.
	time.Sleep(200 * time.Millisecond)
	ep.Close()
	wg.Wait()
	if failed < 32-6 { // 3000 bytes take at most 5 requests of 500+ bytes
		t.Fatalf("%d calls failed with the write's error, want at least %d", failed, 32-6)
	}
}

// binInPlace: a bin result into a []byte is the payload as received; anything else takes the
// general path (Unmarshal), with the same results.
func TestBinInPlace(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want []byte
		fast bool
	}{
		{[]byte("abc"), []byte("abc"), true},
		{[]byte{}, []byte{}, true},
		{bytes.Repeat([]byte{7}, 70000), bytes.Repeat([]byte{7}, 70000), true}, // bin 32
		{"a str", []byte("a str"), false},
		{nil, nil, false},
	} {
		raw, err := mpk.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		var fast []byte
		if got := binInPlace(raw, &fast); got != tc.fast {
			t.Fatalf("%T: binInPlace = %v", tc.v, got)
		}
		ep := &Endpoint{plain: true}
		var out []byte
		if err := ep.decodeInto(raw, &out); err != nil || !bytes.Equal(out, tc.want) || (out == nil) != (tc.want == nil) {
			t.Fatalf("%T: decodeInto = %v, %v", tc.v, out, err)
		}
		var general []byte
		if err := mpk.Unmarshal(raw, &general); err != nil || !bytes.Equal(general, out) || (general == nil) != (out == nil) {
			t.Fatalf("%T: Unmarshal gives %v, decodeInto %v", tc.v, general, out)
		}
		if tc.fast && len(out) > 0 && &out[0] != &raw[len(raw)-len(out)] {
			t.Fatalf("%T: not decoded in place", tc.v)
		}
		if cap(out) != len(out) {
			t.Fatalf("%T: cap %d > len %d (an append would write into the message)", tc.v, cap(out), len(out))
		}
	}
	// Trailing bytes or a truncated bin: not one bin.
	var x []byte
	if binInPlace([]byte{0xc4, 0x01, 'a', 0xc0}, &x) || binInPlace([]byte{0xc4, 0x05, 'a'}, &x) {
		t.Fatal("binInPlace took a value that is not exactly one bin")
	}
}
