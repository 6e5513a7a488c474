package mpkrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
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

// gateConn records every Write. While held, each Write waits for a release (one per Write) after
// announcing itself on entered; reads come from the pipe in (what the test feeds), and Close makes
// reads and later writes fail.
type gateConn struct {
	in      *io.PipeReader
	feed    *io.PipeWriter
	mu      sync.Mutex
	writes  [][]byte
	hold    bool
	failErr error // returned by every Write (a held one: once released) while set
	entered chan int
	release chan struct{}
	closed  chan struct{}
	once    sync.Once
}

func newGateConn() *gateConn {
	r, w := io.Pipe()
	return &gateConn{in: r, feed: w, entered: make(chan int, 1024), release: make(chan struct{}), closed: make(chan struct{})}
}

func (c *gateConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	n, hold := len(c.writes), c.hold
	c.mu.Unlock()
	c.entered <- n
	if hold {
		select {
		case <-c.release:
		case <-c.closed:
			return 0, io.ErrClosedPipe
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failErr != nil {
		return 0, c.failErr
	}
	c.writes = append(c.writes, bytes.Clone(b))
	return len(b), nil
}

func (c *gateConn) Read(b []byte) (int, error) { return c.in.Read(b) }

func (c *gateConn) Close() error {
	c.once.Do(func() { close(c.closed); c.in.Close() })
	return nil
}

func (c *gateConn) setHold(hold bool) {
	c.mu.Lock()
	c.hold = hold
	c.mu.Unlock()
}

func (c *gateConn) written() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.writes...)
}

// waitFor fails the test if ch does not deliver within 30 s (a hang, not a timing).
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: nothing after 30 s\n%s", what, buf[:runtime.Stack(buf, true)])
		panic("unreachable")
	}
}

// messages splits b into its MessagePack messages, decoded.
func messages(t *testing.T, b []byte) [][]any {
	t.Helper()
	var out [][]any
	for len(b) > 0 {
		var m []any
		rest, err := mpk.UnmarshalPrefix(b, &m)
		if err != nil {
			t.Fatalf("written bytes: %v", err)
		}
		out = append(out, m)
		b = rest
	}
	return out
}

// A lone call is written by its caller before Go returns: no hand-off, no wait for a batch.
func TestEndpointWriteLoneCallNotDelayed(t *testing.T) {
	c := newGateConn()
	ep := New(c, nil)
	defer ep.Close()
	p := ep.Go(context.Background(), "f", 1, "x")
	w := c.written()
	if len(w) != 1 {
		t.Fatalf("%d writes when Go returned, want 1", len(w))
	}
	want, _ := mpk.Marshal([]any{0, p.MsgID, "f", []any{1, "x"}})
	if !bytes.Equal(w[0], want) {
		t.Fatalf("written % x, want % x", w[0], want)
	}
	ep.Close()
	var ce *ConnError
	if err := p.Result(nil); !errors.As(err, &ce) {
		t.Fatalf("after Close: %v", err)
	}
}

// Calls made while a Write is in progress return at once, queued, and all go out together in the
// next single Write, whole and in order; Notify waits until its message is written.
func TestEndpointWriteCoalescedConcurrentCallers(t *testing.T) {
	c := newGateConn()
	c.setHold(true)
	ep := New(c, nil)
	defer ep.Close()
	ctx := context.Background()
	first := make(chan *Pending, 1)
	go func() { first <- ep.Go(ctx, "first") }()
	waitFor(t, c.entered, "first write") // the first caller is now inside Write

	const n = 32
	var wg sync.WaitGroup
	pend := make([]*Pending, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			pend[i] = ep.Go(ctx, "queued", i, bytes.Repeat([]byte{byte(i)}, 100*i))
		}(i)
	}
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	waitFor(t, returned, "queued callers returning while the first Write is held")

	noted := make(chan error, 1)
	go func() { noted <- ep.Notify("note", "n") }()
	for { // until Notify waits for its batch
		ep.wmu.Lock()
		w := ep.wwaiting
		ep.wmu.Unlock()
		if w == 1 {
			break
		}
		runtime.Gosched()
	}
	select {
	case err := <-noted:
		t.Fatalf("Notify returned (%v) before its message was written", err)
	default:
	}
	c.setHold(false)
	c.release <- struct{}{} // the first Write completes; its writer writes the queue
	if err := waitFor(t, noted, "Notify"); err != nil {
		t.Fatal(err)
	}
	w := c.written()
	if len(w) != 2 {
		t.Fatalf("%d writes, want 2 (the first call, then one batch)", len(w))
	}
	batch := messages(t, w[1])
	if len(batch) != n+1 {
		t.Fatalf("the batch holds %d messages, want %d", len(batch), n+1)
	}
	seen := map[uint32]bool{}
	for i, m := range batch[:n] {
		id := uint32(m[1].(int64))
		if m[2] != "queued" || seen[id] {
			t.Fatalf("message %d: %v", i, m)
		}
		seen[id] = true
		arg := int(m[3].([]any)[0].(int64))
		if blob := m[3].([]any)[1].([]byte); len(blob) != 100*arg || pend[arg].MsgID != id {
			t.Fatalf("message %d: call %d's id %d, blob of %d bytes", i, arg, pend[arg].MsgID, len(blob))
		}
	}
	if batch[n][0] != int64(2) || batch[n][1] != "note" {
		t.Fatalf("last message %v, want the notification", batch[n])
	}
	ep.Close()
	var ce *ConnError
	for i, p := range append(pend, <-first) {
		if err := p.Result(nil); !errors.As(err, &ce) {
			t.Fatalf("call %d after Close: %v", i, err)
		}
	}
}

// A Write that fails fails the calls queued behind it with its error, and every later write, even
// when the stream would take them.
func TestEndpointWriteBatchFailure(t *testing.T) {
	c := newGateConn()
	c.setHold(true)
	ep := New(c, nil)
	defer ep.Close()
	ctx := context.Background()
	first := make(chan *Pending, 1)
	go func() { first <- ep.Go(ctx, "first") }()
	waitFor(t, c.entered, "first write")
	var queued []*Pending
	for i := 0; i < 5; i++ {
		queued = append(queued, ep.Go(ctx, "queued", i))
	}
	c.mu.Lock()
	c.failErr = errWriteBroken
	c.mu.Unlock()
	c.release <- struct{}{}
	for i, p := range append(queued, waitFor(t, first, "first call")) {
		if err := p.Result(nil); !errors.Is(err, errWriteBroken) {
			t.Fatalf("call %d: %v, want the write's error", i, err)
		}
	}
	// The stream is not trusted again, even though the connection would now take writes.
	c.mu.Lock()
	c.failErr = nil
	c.mu.Unlock()
	if err := ep.Notify("later"); !errors.Is(err, errWriteBroken) {
		t.Fatalf("a later Notify: %v, want the write's error", err)
	}
	if err := ep.Go(ctx, "later").Result(nil); !errors.Is(err, errWriteBroken) {
		t.Fatalf("a later call: %v, want the write's error", err)
	}
	ep.mu.Lock()
	left := len(ep.pending)
	ep.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d calls still pending after their requests failed", left)
	}
	if n := len(c.written()); n != 0 {
		t.Fatalf("%d writes succeeded", n)
	}
}

// Beyond maxQueued bytes queued, a sender waits until its batch is written.
func TestEndpointWriteQueueBound(t *testing.T) {
	defer func(m int) { maxQueued = m }(maxQueued)
	maxQueued = 1000
	c := newGateConn()
	c.setHold(true)
	ep := New(c, nil)
	defer ep.Close()
	ctx := context.Background()
	go ep.Go(ctx, "first")
	waitFor(t, c.entered, "first write")
	ep.Go(ctx, "small", make([]byte, 500)) // under the bound: returns at once
	sent := make(chan *Pending, 1)
	go func() { sent <- ep.Go(ctx, "big", make([]byte, 600)) }()
	for {
		ep.wmu.Lock()
		w := ep.wwaiting
		ep.wmu.Unlock()
		if w == 1 {
			break
		}
		runtime.Gosched()
	}
	c.setHold(false)
	c.release <- struct{}{}
	waitFor(t, sent, "the call over the bound")
	w := c.written()
	if len(w) != 2 || len(messages(t, w[1])) != 2 {
		t.Fatalf("writes %d, want the first call and one batch of two", len(w))
	}
}

// A sender does not write for others for ever: after maxWriterBatches batches it returns and a new
// goroutine goes on writing what is queued.
func TestEndpointWriteWriterHandsOn(t *testing.T) {
	c := newGateConn()
	c.setHold(true)
	ep := New(c, nil)
	defer ep.Close()
	ctx := context.Background()
	first := make(chan *Pending, 1)
	go func() { first <- ep.Go(ctx, "first") }()
	var got *Pending
	for i := 0; got == nil; i++ {
		waitFor(t, c.entered, "a write")
		if i > maxWriterBatches+1 {
			t.Fatalf("the first caller still writing after %d batches", i-1)
		}
		ep.Go(ctx, "more", i) // queued behind the held Write: keeps the writer busy
		c.release <- struct{}{}
		select {
		case got = <-first:
		default:
			if i == maxWriterBatches {
				got = waitFor(t, first, "the first caller to return")
			}
		}
	}
	// What is queued is still written, by the goroutine the first caller handed on to.
	waitFor(t, c.entered, "the handed-on write")
	c.setHold(false)
	c.release <- struct{}{}
	for !ep.writeIdle() {
		runtime.Gosched()
	}
	n := 0
	for _, w := range c.written() {
		n += len(messages(t, w))
	}
	if n != maxWriterBatches+2 {
		t.Fatalf("%d messages written, want %d", n, maxWriterBatches+2)
	}
}

// Shutdown waits for the responses queued behind a Write in progress before it closes the stream,
// even when no call is pending and no handler is running any more.
func TestEndpointWriteShutdownWaitsForQueue(t *testing.T) {
	c := newGateConn()
	c.setHold(true)
	ep := New(c, nil)
	defer ep.Close()
	ep.Register("f", func(x int) int { return x })
	noted := make(chan error, 1)
	go func() { noted <- ep.Notify("n") }() // its Write is held: the writer is no call, no handler
	waitFor(t, c.entered, "the notification's write")
	go func() {
		b, _ := mpk.Marshal([]any{0, 1, "f", []any{7}})
		c.feed.Write(b)
	}()
	for { // until the response is queued and its handler has returned
		ep.wmu.Lock()
		queued := len(ep.wq) // bytes
		ep.wmu.Unlock()
		ep.nmu.Lock()
		running := ep.running
		ep.nmu.Unlock()
		if queued > 0 && running == 0 {
			break
		}
		runtime.Gosched()
	}
	done := make(chan error, 1)
	go func() { done <- ep.Shutdown(context.Background()) }()
	// Give Shutdown time to decide (a wrong one closes the stream at once; this wait can only let
	// a wrong Shutdown pass when it is slower than this, never fail a right one).
	select {
	case <-c.closed:
		t.Fatal("Shutdown closed the stream while a response was queued")
	case <-time.After(100 * time.Millisecond):
	}
	c.setHold(false)
	select {
	case c.release <- struct{}{}: // the held Write is still waiting: nothing was closed
	case <-time.After(10 * time.Second):
		t.Fatal("the held Write was not waiting for its release (the stream was closed under it?)")
	}
	if err := waitFor(t, done, "Shutdown"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(t, noted, "Notify"); err != nil {
		t.Fatal(err)
	}
	w := c.written()
	if len(w) != 2 {
		t.Fatalf("%d writes, want the notification and the response", len(w))
	}
	if m := messages(t, w[1]); len(m) != 1 || m[0][1] != int64(1) || m[0][3] != int64(7) {
		t.Fatalf("second write %v, want the response", m)
	}
}
