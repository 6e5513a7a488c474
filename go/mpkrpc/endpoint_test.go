package mpkrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mpk.dev/go/mpk"
)

// listen returns a loopback TCP listener.
func listen(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// connPair returns both ends of a loopback TCP connection.
func connPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	l := listen(t)
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			ch <- nil
			return
		}
		ch <- c
	}()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b == nil {
		t.Fatal("accept failed")
	}
	return a, b
}

// pair returns two endpoints talking to each other over loopback TCP.
func pair(t testing.TB, oa, ob *Options) (*Endpoint, *Endpoint) {
	a, b := connPair(t)
	ea, eb := New(a, oa), New(b, ob)
	t.Cleanup(func() {
		ea.Close()
		eb.Close()
		ea.Wait()
		eb.Wait()
	})
	return ea, eb
}

// rawPeer is the other side of an endpoint, driven message by message.
type rawPeer struct {
	t    *testing.T
	conn net.Conn
	dec  *mpk.Decoder
}

func newRawPeer(t *testing.T, opts *Options) (*Endpoint, *rawPeer) {
	a, b := connPair(t)
	ep := New(a, opts)
	t.Cleanup(func() { ep.Close(); ep.Wait(); b.Close() })
	return ep, &rawPeer{t: t, conn: b, dec: mpk.NewDecoder(b)}
}

func (p *rawPeer) read() []any {
	p.t.Helper()
	var v []any
	if err := p.dec.Decode(&v); err != nil {
		p.t.Fatalf("peer read: %v", err)
	}
	return v
}

func (p *rawPeer) send(v ...any) {
	p.t.Helper()
	b, err := mpk.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	p.sendRaw(b)
}

func (p *rawPeer) sendRaw(b []byte) {
	p.t.Helper()
	if _, err := p.conn.Write(b); err != nil {
		p.t.Fatalf("peer write: %v", err)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEndpointCallBothWays(t *testing.T) {
	a, b := pair(t, nil, nil)
	b.Register("add", func(x, y int) int { return x + y })
	b.Register("greet", func(ctx context.Context, name string) (string, error) {
		if name == "" {
			return "", errors.New("no name")
		}
		return "hello " + name, nil
	})
	a.Register("twice", func(s string) string { return s + s })
	ctx := ctxT(t)

	v, err := a.Call(ctx, "add", 2, 3)
	if err != nil || v != int64(5) {
		t.Fatalf("add = %#v, %v", v, err)
	}
	var s string
	if err := a.CallInto(ctx, &s, "greet", "mpk"); err != nil || s != "hello mpk" {
		t.Fatalf("greet = %q, %v", s, err)
	}
	if err := b.CallInto(ctx, &s, "twice", "ab"); err != nil || s != "abab" {
		t.Fatalf("twice = %q, %v", s, err)
	}
	_, err = a.Call(ctx, "greet", "")
	var ce *CallError
	if !errors.As(err, &ce) || ce.Method != "greet" || ce.Message() != "no name" {
		t.Fatalf("greet error = %#v", err)
	}
	if typ, msg, ok := ce.Neovim(); !ok || typ != NeovimException || msg != "no name" {
		t.Fatalf("greet error shape %v %q %v", typ, msg, ok)
	}
	p := a.Go(ctx, "add", 40, 2)
	<-p.Done()
	if v, err := p.Value(); err != nil || v != int64(42) {
		t.Fatalf("async add = %v, %v", v, err)
	}
}

func TestEndpointHandlerErrors(t *testing.T) {
	a, b := pair(t, nil, nil)
	b.Register("one", func(x int) int { return x })
	b.Register("some", func(first string, rest ...int) int { return len(rest) })
	b.Register("boom", func() { panic("kaboom") })
	b.Register("coded", func() error { return Error(map[string]any{"code": 7, "message": "seven"}) })
	ctx := ctxT(t)
	check := func(method, want string, args ...any) *CallError {
		t.Helper()
		_, err := a.Call(ctx, method, args...)
		var ce *CallError
		if !errors.As(err, &ce) || !strings.Contains(ce.Message(), want) {
			t.Fatalf("%s: error %v, want %q", method, err, want)
		}
		return ce
	}
	check("nope", "Invalid method: nope")
	check("one", "Wrong number of arguments: expecting 1 but got 2", 1, 2)
	check("one", "Wrong number of arguments: expecting 1 but got 0")
	check("some", "Wrong number of arguments: expecting at least 1 but got 0")
	check("one", "Wrong type for argument 1 when calling one", "x")
	check("boom", "handler boom panicked: kaboom")
	ce := check("coded", "seven")
	if code, msg, ok := ce.CodeMessage(); !ok || code != 7 || msg != "seven" {
		t.Fatalf("coded: %v %q %v", code, msg, ok)
	}
	if v, err := a.Call(ctx, "some", "x", 1, 2, 3); err != nil || v != int64(3) {
		t.Fatalf("some = %v, %v", v, err)
	}
	// The endpoint is still usable after all of these.
	if v, err := a.Call(ctx, "one", 9); err != nil || v != int64(9) {
		t.Fatalf("one = %v, %v", v, err)
	}
}

// 10,000 calls in flight at once, answered by a peer in shuffled order.
func TestEndpointPipelinedShuffled(t *testing.T) {
	const n = 10000
	ep, peer := newRawPeer(t, nil)
	ctx := ctxT(t)
	calls := make([]*Pending, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range calls {
			calls[i] = ep.Go(ctx, "double", i)
		}
	}()
	reqs := make([][]any, n)
	for i := range reqs {
		reqs[i] = peer.read()
	}
	<-done
	rng := rand.New(rand.NewSource(1))
	rng.Shuffle(n, func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	var out []byte
	for _, r := range reqs {
		if r[0] != int64(0) || r[2] != "double" {
			t.Fatalf("request %v", r)
		}
		x := r[3].([]any)[0].(int64)
		b, _ := mpk.Marshal([]any{1, r[1], nil, 2 * x})
		out = append(out, b...)
	}
	// One big write, so replies cross read boundaries anywhere.
	peer.sendRaw(out)
	seen := map[uint32]bool{}
	for i, p := range calls {
		var v int
		if err := p.Result(&v); err != nil || v != 2*i {
			t.Fatalf("call %d = %d, %v", i, v, err)
		}
		if seen[p.MsgID] {
			t.Fatalf("msgid %d used twice", p.MsgID)
		}
		seen[p.MsgID] = true
	}
}

func TestEndpointNotificationOrder(t *testing.T) {
	const n = 2000
	a, b := pair(t, nil, nil)
	got := make(chan int, n)
	b.Register("tick", func(i int) {
		if i%97 == 0 {
			runtime.Gosched() // a slow handler must not let later notifications overtake it
		}
		got <- i
	})
	for i := 0; i < n; i++ {
		if err := a.Notify("tick", i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if j := <-got; j != i {
			t.Fatalf("notification %d handled at position %d", j, i)
		}
	}
}

// The server calls back into the client while the client's call is pending.
func TestEndpointCallbackDuringCall(t *testing.T) {
	client, server := pair(t, nil, nil)
	client.Register("client.name", func() string { return "alice" })
	server.Register("hello", func(ctx context.Context) (string, error) {
		var name string
		if err := FromContext(ctx).CallInto(ctx, &name, "client.name"); err != nil {
			return "", err
		}
		return "hello " + name, nil
	})
	v, err := client.Call(ctxT(t), "hello")
	if err != nil || v != "hello alice" {
		t.Fatalf("hello = %v, %v", v, err)
	}
}

func TestEndpointCancelAndLateReply(t *testing.T) {
	var reports []error
	var mu sync.Mutex
	ep, peer := newRawPeer(t, &Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	ctx, cancel := context.WithCancel(context.Background())
	p := ep.Go(ctx, "slow")
	req := peer.read()
	cancel()
	if _, err := p.Value(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	tctx, tcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer tcancel()
	p2 := ep.Go(tctx, "slower")
	req2 := peer.read()
	if _, err := p2.Value(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed out call: %v", err)
	}
	// Both ids stay reserved until their replies come.
	ep.mu.Lock()
	_, r1 := ep.abandoned[uint32(req[1].(int64))]
	_, r2 := ep.abandoned[uint32(req2[1].(int64))]
	ep.mu.Unlock()
	if !r1 || !r2 {
		t.Fatal("cancelled ids not kept reserved")
	}
	// Late replies are dropped quietly; the endpoint answers nothing and stays usable.
	peer.send(1, req[1], nil, "late")
	peer.send(1, req2[1], nil, "later")
	p3 := ep.Go(ctxT(t), "fast")
	req3 := peer.read()
	if req3[2] != "fast" {
		t.Fatalf("unexpected message %v (a response sent for a late reply?)", req3)
	}
	peer.send(1, req3[1], nil, "ok")
	if v, err := p3.Value(); err != nil || v != "ok" {
		t.Fatalf("fast = %v, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 0 {
		t.Fatalf("late replies reported: %v", reports)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(ep.abandoned) != 0 || len(ep.pending) != 0 {
		t.Fatalf("left over: %d abandoned, %d pending", len(ep.abandoned), len(ep.pending))
	}
}

func TestEndpointMsgidWrap(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	ctx := ctxT(t)
	ep.mu.Lock()
	ep.nextID = math.MaxUint32 - 1
	ep.mu.Unlock()
	a := ep.Go(ctx, "a") // MaxUint32-1
	b := ep.Go(ctx, "b") // MaxUint32
	peer.read()
	peer.read()
	ep.mu.Lock()
	ep.pending[2] = &Pending{done: make(chan struct{})} // id 2 busy
	ep.mu.Unlock()
	c := ep.Go(ctx, "c") // wraps, skips 0 (reserved) and 2... gets 1
	d := ep.Go(ctx, "d") // 3
	ep.mu.Lock()
	delete(ep.pending, 2)
	ep.mu.Unlock()
	got := []uint32{a.MsgID, b.MsgID, c.MsgID, d.MsgID}
	want := []uint32{math.MaxUint32 - 1, math.MaxUint32, 1, 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("msgids %v, want %v", got, want)
	}
	for _, r := range [][]any{peer.read(), peer.read()} {
		peer.send(1, r[1], nil, r[2])
	}
	peer.send(1, uint64(math.MaxUint32), nil, "b")
	peer.send(1, uint64(math.MaxUint32-1), nil, "a")
	for _, p := range []*Pending{a, b, c, d} {
		if v, err := p.Value(); err != nil || v != p.Method {
			t.Fatalf("%s = %v, %v", p.Method, v, err)
		}
	}
}

func TestEndpointDisconnectMidMessage(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	ctx := ctxT(t)
	p1 := ep.Go(ctx, "a")
	p2 := ep.Go(ctx, "b")
	r := peer.read()
	peer.read()
	b, _ := mpk.Marshal([]any{1, r[1], nil, "a long result string"})
	peer.sendRaw(b[:len(b)-5])
	peer.conn.Close()
	for _, p := range []*Pending{p1, p2} {
		_, err := p.Value()
		var ce *ConnError
		var de *mpk.DecodeError
		if !errors.As(err, &ce) || !errors.As(err, &de) || de.Kind != mpk.Truncated {
			t.Fatalf("%s: %v, want a ConnError caused by truncated input", p.Method, err)
		}
	}
	if _, err := ep.Call(ctx, "after"); !errors.As(err, new(*ConnError)) {
		t.Fatalf("call after disconnect: %v", err)
	}
	<-ep.Done()
}

func TestEndpointPeerEOF(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	p := ep.Go(ctxT(t), "a")
	peer.read()
	peer.conn.Close()
	_, err := p.Value()
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "connection ended: EOF") {
		t.Fatalf("pending call at EOF: %v", err)
	}
}

func TestEndpointClose(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	p := ep.Go(ctxT(t), "a")
	peer.read()
	if err := ep.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Value(); !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call after Close: %v", err)
	}
	if err := ep.Notify("x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Notify after Close: %v", err)
	}
	ep.Wait()
	if err := ep.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Hostile frames that end the stream: the endpoint answers with msgid 0 and ends, failing the
// pending call with the decode error.
func TestEndpointHostileFatal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bytes []byte
		kind  mpk.Kind
	}{
		{"c1", []byte{0xc1}, mpk.InvalidByte},
		{"giant array", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, mpk.LengthLimit},
		{"giant str in a message", []byte{0x94, 0x01, 0x01, 0xc0, 0xdb, 0xff, 0xff, 0xff, 0xff}, mpk.LengthLimit},
		{"giant bin", []byte{0x94, 0x00, 0x01, 0xc6, 0x7f, 0xff, 0xff, 0xff}, mpk.LengthLimit},
		{"giant map", []byte{0xdf, 0x10, 0x00, 0x00, 0x00}, mpk.LengthLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep, peer := newRawPeer(t, nil)
			p := ep.Go(ctxT(t), "a")
			peer.read()
			peer.sendRaw(tc.bytes) // and the peer keeps the connection open
			resp := peer.read()
			// Neovim 0.7.2 answers bytes that are not MessagePack with type 0 (Exception).
			if typ, msg, ok := NeovimError(resp[2]); resp[0] != int64(1) || resp[1] != int64(0) || !ok ||
				typ != NeovimException || !strings.HasPrefix(msg, "mpkrpc: malformed input, closing: ") {
				t.Fatalf("answer %v", resp)
			}
			_, err := p.Value()
			var de *mpk.DecodeError
			if !errors.As(err, new(*ConnError)) || !errors.As(err, &de) || de.Kind != tc.kind {
				t.Fatalf("pending call: %v, want %v", err, tc.kind)
			}
			<-ep.Done()
		})
	}
}

// Hostile frames the stream survives: each well-formed value that is no valid message is answered
// with msgid 0 and reported; a response for an unknown id is reported and not answered.
func TestEndpointHostileSurvivable(t *testing.T) {
	reports := make(chan error, 16)
	ep, peer := newRawPeer(t, &Options{OnError: func(err error) { reports <- err }})
	ep.Register("echo", func(s string) string { return s })
	for _, tc := range []struct {
		name   string
		msg    []any
		reason string
	}{
		{"five elements", []any{0, 1, "echo", []any{"x"}, 5}, "3 or 4 elements"},
		{"request of 3", []any{0, 1, "echo"}, "type 0 must have 4 elements"},
		{"msgid beyond u32", []any{0, uint64(1) << 32, "echo", []any{"x"}}, "unsigned 32-bit"},
		{"negative msgid", []any{0, -1, "echo", []any{"x"}}, "unsigned 32-bit"},
		{"type 3", []any{3, 1, "echo", []any{}}, "type must be 0, 1 or 2"},
		{"params not an array", []any{0, 1, "echo", "x"}, "params must be an array"},
		{"not an array", nil, "must be an array"},
		{"method not a str", []any{0, 1, 7, []any{}}, "method must be a str"},
	} {
		var b []byte
		if tc.msg == nil {
			b = []byte{0x2a}
		} else {
			b, _ = mpk.Marshal(tc.msg)
		}
		peer.sendRaw(b)
		resp := peer.read()
		// Neovim 0.7.2 answers a value that is no message with type 1 (Validation).
		typ, msg, ok := NeovimError(resp[2])
		if len(resp) != 4 || resp[0] != int64(1) || resp[1] != int64(0) || resp[3] != nil || !ok ||
			typ != NeovimValidation || !strings.HasPrefix(msg, "mpkrpc: invalid message: ") || !strings.Contains(msg, tc.reason) {
			t.Fatalf("%s: answer %v", tc.name, resp)
		}
		var pe *ProtocolError
		if err := <-reports; !errors.As(err, &pe) || !strings.Contains(pe.Reason, tc.reason) {
			t.Fatalf("%s: report %v", tc.name, err)
		}
	}
	// A response nobody asked for: reported, not answered.
	peer.send(1, 77, nil, "surprise")
	var pe *ProtocolError
	if err := <-reports; !errors.As(err, &pe) || !strings.Contains(pe.Reason, "msgid 77") {
		t.Fatalf("unknown id report: %v", err)
	}
	// Still usable: the next thing the peer reads is the answer to its request.
	peer.send(0, 5, "echo", []any{"still here"})
	if resp := peer.read(); resp[1] != int64(5) || resp[3] != "still here" {
		t.Fatalf("echo after hostile frames: %v", resp)
	}
}

func TestEndpointNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		a, b := connPair(t)
		ea, eb := New(a, nil), New(b, nil)
		eb.Register("block", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		eb.Register("n", func(i int) int { return i })
		ctx, cancel := context.WithCancel(context.Background())
		p := ea.Go(ctx, "block")
		if v, err := ea.Call(context.Background(), "n", i); err != nil || v != int64(i) {
			t.Fatal(v, err)
		}
		_ = ea.Notify("nobody")
		cancel()
		<-p.Done()
		if i%2 == 0 {
			ea.Close()
		} else {
			eb.Close()
		}
		ea.Wait()
		eb.Wait()
	}
	// Goroutines that have returned may take a moment to be reaped.
	for i := 0; i < 200 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestEndpointUnixSocketAndServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rpc.sock")
	var s Server
	s.Register("upper", func(s string) string { return strings.ToUpper(s) })
	if _, err := s.Listen("unix", path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ep, err := Dial(ctx, "unix", path, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer ep.Close()
			want := fmt.Sprintf("CLIENT %d", i)
			if v, err := ep.Call(ctx, "upper", fmt.Sprintf("client %d", i)); err != nil || v != want {
				t.Errorf("upper = %v, %v", v, err)
			}
		}(i)
	}
	wg.Wait()
}

func TestEndpointExtAndBinAsString(t *testing.T) {
	a, b := pair(t, NeovimOptions(), NeovimOptions())
	b.Register("next", func(buf Buffer, ws []Window) []any { return []any{buf + 1, Tabpage(7), ws} })
	b.Register("bin", func() []byte { return []byte("from bin") })
	b.Register("anybin", func(v []any) []any { return v })
	ctx := ctxT(t)
	var out []any
	if err := a.CallInto(ctx, &out, "next", Buffer(1), []Window{3, 4}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%T %v %T %v", out[0], out[0], out[1], out[1]) != "mpkrpc.Buffer 2 mpkrpc.Tabpage 7" {
		t.Fatalf("next = %#v", out)
	}
	if ws, ok := out[2].([]any); !ok || ws[0] != Window(3) || ws[1] != Window(4) {
		t.Fatalf("windows = %#v", out[2])
	}
	var buf Buffer
	if err := a.CallInto(ctx, &buf, "next", Buffer(41), []Window{}); err == nil {
		t.Fatal("a 3-element result decoded into a Buffer")
	}
	// On the wire a Buffer is ext 0 holding an int.
	raw := mpk.RawMessage{}
	if err := a.CallInto(ctx, &raw, "next", Buffer(1), []Window{}); err != nil {
		t.Fatal(err)
	}
	if want := "93d40002d4020790"; fmt.Sprintf("%x", []byte(raw)) != want {
		t.Fatalf("wire %x, want %s", []byte(raw), want)
	}
	if v, err := a.Call(ctx, "bin"); err != nil || v != "from bin" {
		t.Fatalf("bin = %#v, %v", v, err)
	}
	if v, err := a.Call(ctx, "anybin", []any{[]byte("x")}); err != nil || fmt.Sprintf("%#v", v) != `[]interface {}{"x"}` {
		t.Fatalf("anybin = %#v, %v", v, err)
	}
	// Without the options the same bytes stay bin and ext.
	c, d := pair(t, nil, nil)
	d.Register("bin", func() []byte { return []byte("from bin") })
	if v, err := c.Call(ctx, "bin"); err != nil || fmt.Sprintf("%T", v) != "[]uint8" {
		t.Fatalf("plain bin = %#v, %v", v, err)
	}
}

func TestEndpointTypedHandleResult(t *testing.T) {
	a, b := pair(t, NeovimOptions(), NeovimOptions())
	b.Register("buf", func() Buffer { return 5 })
	b.Register("wins", func() []Window { return []Window{1, 2} })
	ctx := ctxT(t)
	var buf Buffer
	if err := a.CallInto(ctx, &buf, "buf"); err != nil || buf != 5 {
		t.Fatalf("buf = %v, %v", buf, err)
	}
	var ws []Window
	if err := a.CallInto(ctx, &ws, "wins"); err != nil || fmt.Sprint(ws) != "[1 2]" {
		t.Fatalf("wins = %v, %v", ws, err)
	}
}

func TestEndpointStrictUTF8(t *testing.T) {
	a, b := pair(t, &Options{StrictUTF8: true}, nil)
	b.Register("bad", func() string { return "\xff" })
	_, err := a.Call(ctxT(t), "bad")
	var de *mpk.DecodeError
	if !errors.As(err, &de) || de.Kind != mpk.InvalidUTF8 {
		t.Fatalf("strict: %v", err)
	}
	c, d := pair(t, nil, nil)
	d.Register("bad", func() string { return "\xff" })
	if v, err := c.Call(ctxT(t), "bad"); err != nil || v != "\xff" {
		t.Fatalf("kept: %q, %v", v, err)
	}
}

func TestEndpointConcurrentWrites(t *testing.T) {
	a, b := pair(t, nil, nil)
	b.Register("echo", func(s []byte) []byte { return s })
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			payload := []byte(strings.Repeat(string(rune('a'+g)), 10000+g))
			for i := 0; i < 50; i++ {
				var got []byte
				if err := a.CallInto(ctx, &got, "echo", payload); err != nil || string(got) != string(payload) {
					t.Errorf("echo %d/%d: %v", g, i, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// Notifications the peer sent just before closing are still handled, in order.
func TestEndpointNotificationsBeforeEOF(t *testing.T) {
	got := make(chan int, 100)
	ep, peer := newRawPeer(t, nil)
	ep.Register("n", func(i int) { got <- i })
	var out []byte
	for i := 0; i < 100; i++ {
		b, _ := mpk.Marshal([]any{2, "n", []any{i}})
		out = append(out, b...)
	}
	peer.sendRaw(out)
	peer.conn.Close()
	ep.Wait()
	close(got)
	i := 0
	for j := range got {
		if j != i {
			t.Fatalf("notification %d at %d", j, i)
		}
		i++
	}
	if i != 100 {
		t.Fatalf("%d of 100 notifications handled", i)
	}
}

// A call whose context is already done sends nothing.
func TestEndpointCallWithDoneContext(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ep.Call(ctx, "never"); !errors.Is(err, context.Canceled) {
		t.Fatalf("call: %v", err)
	}
	if err := ep.Notify("first"); err != nil {
		t.Fatal(err)
	}
	if m := peer.read(); m[1] != "first" {
		t.Fatalf("peer got %v first", m)
	}
}

// A connection reset by the peer fails pending calls with the read error.
func TestEndpointPeerReset(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	p := ep.Go(ctxT(t), "a")
	peer.read()
	peer.conn.(*net.TCPConn).SetLinger(0) // close sends a RST
	peer.conn.Close()
	_, err := p.Value()
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("pending call after a reset: %v", err)
	}
}

// A method sent as bin (some peers do) is served.
func TestEndpointBinMethod(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	ep.Register("echo", func(s string) string { return s })
	peer.send(0, 9, []byte("echo"), []any{"bin"})
	if resp := peer.read(); resp[1] != int64(9) || resp[3] != "bin" {
		t.Fatalf("answer %v", resp)
	}
}

// With the default limits an argument may nest 1022 arrays deep (the envelope and the params take
// two levels of 1024); one more ends the connection with depth_limit.
func TestEndpointDepthLimit(t *testing.T) {
	nested := func(n int) mpk.RawMessage {
		b := bytes.Repeat([]byte{0x91}, n-1)
		return append(b, 0x90)
	}
	a, b := pair(t, nil, nil)
	b.Register("echo", func(v mpk.RawMessage) mpk.RawMessage { return v })
	ctx := ctxT(t)
	var got mpk.RawMessage
	if err := a.CallInto(ctx, &got, "echo", nested(1022)); err != nil || !bytes.Equal(got, nested(1022)) {
		t.Fatalf("1022 deep: %v", err)
	}
	_, err := a.Call(ctx, "echo", nested(1023))
	var de *mpk.DecodeError
	// The server ends the connection; the client learns why from its msgid-0 answer.
	var ce *ConnError
	if !errors.As(err, &ce) || !errors.Is(err, io.EOF) || !strings.Contains(ce.Peer, "depth_limit") {
		t.Fatalf("1023 deep: %v", err)
	}
	<-b.Done()
	if !errors.As(b.Err(), &de) || de.Kind != mpk.DepthLimit {
		t.Fatalf("server ended with %v", b.Err())
	}
}

// An argument mpk cannot encode fails the call before anything is sent, and frees its msgid.
func TestEndpointUnencodableArgument(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	_, err := ep.Call(ctxT(t), "f", 1, make(chan int))
	var ue *mpk.UnsupportedTypeError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "argument 1") {
		t.Fatalf("call: %v", err)
	}
	if err := ep.Notify("g", func() {}); !errors.As(err, &ue) {
		t.Fatalf("notify: %v", err)
	}
	ep.mu.Lock()
	n := len(ep.pending)
	ep.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d calls left pending", n)
	}
	p := ep.Go(ctxT(t), "h")
	if m := peer.read(); m[2] != "h" || m[1] != int64(p.MsgID) {
		t.Fatalf("peer got %v first", m)
	}
}

// Shutdown waits for the endpoint's pending calls and for the requests it serves, then closes.
func TestEndpointShutdown(t *testing.T) {
	ep, peer := newRawPeer(t, nil)
	release := make(chan struct{})
	ep.Register("slow", func() string { <-release; return "done" })
	p := ep.Go(ctxT(t), "mine")
	req := peer.read()
	peer.send(0, 77, "slow", []any{})
	shut := make(chan error, 1)
	go func() { shut <- ep.Shutdown(ctxT(t)) }()
	// Neither the call nor the request is finished: the endpoint stays open.
	peer.send(1, req[1], nil, "answer")
	if v, err := p.Value(); err != nil || v != "answer" {
		t.Fatalf("pending call during Shutdown: %v, %v", v, err)
	}
	select {
	case <-ep.Done():
		t.Fatal("closed before the request it serves was answered")
	default:
	}
	close(release)
	if resp := peer.read(); resp[1] != int64(77) || resp[3] != "done" {
		t.Fatalf("response %v", resp)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	<-ep.Done()
	if !errors.Is(ep.Err(), ErrClosed) {
		t.Fatalf("ended with %v", ep.Err())
	}

	// A context that ends first closes at once.
	ep2, peer2 := newRawPeer(t, nil)
	p2 := ep2.Go(ctxT(t), "never")
	peer2.read()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ep2.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v", err)
	}
	if _, err := p2.Value(); !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call: %v", err)
	}
}

// Pending.Cancel: the call fails with context.Canceled, its id stays reserved (the next call does
// not take it) until the late reply, which is dropped quietly; Cancel after the outcome changes
// nothing.
func TestPendingCancel(t *testing.T) {
	var reports []error
	var mu sync.Mutex
	ep, peer := newRawPeer(t, &Options{OnError: func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() }})
	ctx := ctxT(t)
	p := ep.Go(ctx, "slow")
	req := peer.read()
	p.Cancel()
	select {
	case <-p.Done():
	default:
		t.Fatal("Cancel did not finish the call")
	}
	if _, err := p.Value(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	p2 := ep.Go(ctx, "next")
	req2 := peer.read()
	if req2[1] == req[1] {
		t.Fatalf("msgid %v reused while the cancelled call's reply may still come", req[1])
	}
	peer.send(1, req[1], nil, "late")
	peer.send(1, req2[1], nil, "ok")
	if v, err := p2.Value(); err != nil || v != "ok" {
		t.Fatalf("next = %v, %v", v, err)
	}
	p2.Cancel() // after the outcome: no effect
	if v, err := p2.Value(); err != nil || v != "ok" {
		t.Fatalf("next after Cancel = %v, %v", v, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 0 {
		t.Fatalf("late reply reported: %v", reports)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(ep.abandoned) != 0 || len(ep.pending) != 0 {
		t.Fatalf("left over: %d abandoned, %d pending", len(ep.abandoned), len(ep.pending))
	}
}

// A notification is never answered: one for an unknown method, with the wrong params count, whose
// handler returns an error or panics goes to OnError (in arrival order), and the next message the
// peer reads is the reply to its following request.
func TestEndpointNotificationFailuresNotAnswered(t *testing.T) {
	reports := make(chan error, 16)
	ep, peer := newRawPeer(t, &Options{OnError: func(err error) { reports <- err }})
	ep.Register("echo", func(s string) string { return s })
	ep.Register("two", func(a, b int) {})
	ep.Register("fails", func() error { return errors.New("it failed") })
	ep.Register("panics", func() { panic("kaboom") })
	peer.send(2, "nobody", []any{})
	peer.send(2, "two", []any{1})
	peer.send(2, "fails", []any{})
	peer.send(2, "panics", []any{})
	peer.send(0, 9, "echo", []any{"only this"})
	if resp := peer.read(); len(resp) != 4 || resp[0] != int64(1) || resp[1] != int64(9) || resp[2] != nil || resp[3] != "only this" {
		t.Fatalf("first message after four failing notifications: %v", resp)
	}
	for _, want := range []string{
		`notification "nobody": no handler`,
		`notification "two": Wrong number of arguments: expecting 2 but got 1`,
		`notification "fails": it failed`,
		`notification "panics": mpkrpc: handler panics panicked: kaboom`,
	} {
		select {
		case err := <-reports:
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("report %q, want it to hold %q", err, want)
			}
		case <-ctxT(t).Done():
			t.Fatalf("no report holding %q", want)
		}
	}
}
