// Package mpkrpc is MessagePack-RPC over any byte stream: a symmetric Endpoint that calls,
// notifies and serves on one connection, transports for TCP, Unix sockets, stdio and child
// processes, and net/rpc codecs on the same wire format. See go/README.md, section RPC.
package mpkrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sync"
	"sync/atomic"

	"mpk.dev/go/mpk"
)

// Message types of the MessagePack-RPC specification.
const (
	typeRequest      = 0
	typeResponse     = 1
	typeNotification = 2
)

// Options configure an Endpoint. The zero value (or nil) is usable.
type Options struct {
	// Limits bound what the peer may send (nil: DefaultLimits()). The stream decoder buffers one
	// incomplete message, so Str, Bin and Ext bound the memory one message can claim before its
	// bytes have arrived; a message over a limit ends the connection (see Endpoint).
	Limits *mpk.Limits

	// StrictUTF8 makes a str that is not valid UTF-8 a decode error for the argument or result it
	// is in. By default such strings are kept as they are (Neovim sends them).
	StrictUTF8 bool

	// BinAsString decodes bin as string where a value is decoded into an `any` (Neovim sends
	// Vim strings as bin). Typed targets take a str or a bin into a string either way.
	BinAsString bool

	// Ext maps ext types to Go types for this endpoint (NeovimExt for Neovim's handles).
	Ext *ExtRegistry

	// Handlers serves incoming requests and notifications; nil gives the endpoint its own set.
	// A set may be shared by many endpoints (Server does).
	Handlers *Handlers

	// MaxHandlers bounds the request handlers running at once (0: 256). Requests beyond wait in
	// arrival order for a running one to return; the reader never waits, so responses to the
	// endpoint's own calls (a handler calling back into the peer) still come through. A peer
	// flooding requests costs the queued messages' bytes, not a goroutine each.
	MaxHandlers int

	// OnError receives what the endpoint cannot return to anyone: protocol violations by the
	// peer (*ProtocolError), notifications for unknown methods, errors and panics of notification
	// handlers. It is called from the endpoint's goroutines and must not block for long.
	OnError func(error)
}

// DefaultLimits are the limits of an endpoint without Options.Limits: depth 1024, strings,
// bins and exts up to 64 MiB, arrays and maps up to 16 Mi elements.
func DefaultLimits() mpk.Limits {
	return mpk.Limits{Depth: 1024, Str: 64 << 20, Bin: 64 << 20, Ext: 64 << 20, Array: 16 << 20, Map: 16 << 20}
}

// NeovimOptions are the options to talk to Neovim: bin decoded as string into an `any`, invalid
// UTF-8 kept, Buffer/Window/Tabpage as ext types 0/1/2.
func NeovimOptions() *Options { return &Options{BinAsString: true, Ext: NeovimExt()} }

// Endpoint is one side of a MessagePack-RPC connection. Both sides are alike: each calls,
// notifies and serves.
//
// Incoming requests run each in its own goroutine, up to Options.MaxHandlers at once (so a
// handler may call back into the peer);
// notifications are handled one at a time in arrival order on one goroutine. Calls may be in
// flight in any number; their responses are matched by msgid in any order.
//
// The connection ends when the peer closes it (io.EOF), a read fails, the peer sends bytes that
// are not MessagePack or over the limits (*mpk.DecodeError: the endpoint first answers with a
// msgid-0 error response, since the stream cannot be resynchronised), or Close is called. Then
// every pending call fails with a *ConnError naming that cause, later calls fail with the same
// error, handlers' contexts are cancelled and their responses dropped. Notifications the peer
// sent before it ended the connection are still handled (not after Close).
type Endpoint struct {
	rwc      io.ReadWriteCloser
	opts     Options
	lim      mpk.Limits
	dopts    mpk.DecodeOptions
	handlers *Handlers
	plain    bool // no ext registry and no BinAsString: typed decodes need no conversion

	wmu      sync.Mutex // guards the writing state below (see write, in writer.go)
	wcond    *sync.Cond // on wmu: a batch was written (broadcast only when wwaiting > 0)
	writing  bool       // a goroutine is writing: others queue their messages in wq
	wq       []byte     // whole messages waiting for the writing goroutine, in order
	wcalls   []*Pending // the calls whose requests are in wq (failed if its Write fails)
	wspare   []byte     // the writing goroutine's spare queue buffer
	wcspare  []*Pending // and its spare wcalls
	wgen     uint64     // the number of the batch that wq will be (from 1)
	wdone    uint64     // batches up to this one are written (or failed: werr)
	wwaiting int        // senders waiting on wcond for their batch
	werr     error      // the first failed Write's error: every later write fails with it
	wfailed  uint64     // the first batch that failed with werr

	mu        sync.Mutex
	pending   map[uint32]*Pending
	abandoned map[uint32]struct{} // cancelled calls whose reply may still come
	nextID    uint32
	err       error         // *ConnError once ended
	ended     atomic.Bool   // err is set: Err's check without ep.mu (taken by every call and reply)
	peerErr   string        // the last msgid-0 error the peer sent
	idle      chan struct{} // poked when a call or a request handler finishes (Shutdown)

	done        chan struct{}
	ctx         context.Context
	cancel      context.CancelFunc
	nmu         sync.Mutex
	notes       [][]byte // notifications waiting, as received (parsed again when handled)
	nwake       chan struct{}
	dropNotes   bool         // set by Close: queued notifications are dropped
	running     int          // request handlers running (under nmu)
	reqs        [][]byte     // requests waiting for one to return, as received (under nmu)
	work        chan message // idle request goroutines take requests here (see maxIdleWorkers)
	idleWorkers int          // request goroutines waiting on work (under nmu)
	maxRun      int
	wg          sync.WaitGroup
	shutOnce    sync.Once
}

// New starts an endpoint on rwc (it owns rwc from now on and closes it when it ends). Register
// handlers through Options.Handlers before New to serve the first requests; Register works at any
// time, and a request for a method not (yet) registered gets an "Invalid method" error.
func New(rwc io.ReadWriteCloser, opts *Options) *Endpoint {
	ep := &Endpoint{rwc: rwc, pending: map[uint32]*Pending{}, abandoned: map[uint32]struct{}{},
		nextID: 1, done: make(chan struct{}), nwake: make(chan struct{}, 1), idle: make(chan struct{}, 1), wgen: 1, work: make(chan message)}
	ep.wcond = sync.NewCond(&ep.wmu)
	if opts != nil {
		ep.opts = *opts
	}
	ep.lim = DefaultLimits()
	if ep.opts.Limits != nil {
		ep.lim = *ep.opts.Limits
	}
	ep.dopts = mpk.DecodeOptions{Limits: &ep.lim, StrictUTF8: ep.opts.StrictUTF8}
	ep.handlers = ep.opts.Handlers
	if ep.handlers == nil {
		ep.handlers = &Handlers{}
	}
	ep.plain = ep.opts.Ext.empty() && !ep.opts.BinAsString
	ep.maxRun = ep.opts.MaxHandlers
	if ep.maxRun <= 0 {
		ep.maxRun = 256
	}
	ep.ctx, ep.cancel = context.WithCancel(context.WithValue(context.Background(), epKey{}, ep))
	ep.wg.Add(2)
	go ep.readLoop()
	go ep.noteLoop()
	return ep
}

type epKey struct{}

// FromContext returns the endpoint a handler's request came from (nil elsewhere): a handler
// calls back into its peer with it.
func FromContext(ctx context.Context) *Endpoint {
	ep, _ := ctx.Value(epKey{}).(*Endpoint)
	return ep
}

// Register registers fn under name in the endpoint's handler set (see Handlers.Register).
func (ep *Endpoint) Register(name string, fn any) { ep.handlers.Register(name, fn) }

// RegisterRaw registers a raw handler in the endpoint's handler set.
func (ep *Endpoint) RegisterRaw(name string, fn RawHandler) { ep.handlers.RegisterRaw(name, fn) }

// Close ends the connection now: it closes the underlying stream, fails pending calls with a
// *ConnError whose cause is ErrClosed, drops queued notifications and cancels the handlers'
// contexts (their responses are dropped). It does not wait for goroutines: Wait does. It returns
// the error of closing the stream, or nil if the endpoint had already ended.
func (ep *Endpoint) Close() error {
	ep.nmu.Lock()
	ep.dropNotes = true
	ep.nmu.Unlock()
	return ep.shutdown(ErrClosed)
}

// Shutdown is the graceful Close: it waits until none of the endpoint's calls is pending and no
// request from the peer is being served or queued (their responses sent), then closes. Calls and
// requests that start meanwhile are waited for too. If ctx is done first, or the connection ends,
// it closes at once and returns ctx's error (or nil).
func (ep *Endpoint) Shutdown(ctx context.Context) error {
	for {
		ep.mu.Lock()
		calls := len(ep.pending)
		ep.mu.Unlock()
		ep.nmu.Lock()
		serving := ep.running + len(ep.reqs)
		ep.nmu.Unlock()
		if calls == 0 && serving == 0 && ep.writeIdle() { // queued responses written too
			ep.Close()
			return nil
		}
		select {
		case <-ep.idle:
		case <-ep.done:
			ep.Close()
			return nil
		case <-ctx.Done():
			ep.Close()
			return ctx.Err()
		}
	}
}

func (ep *Endpoint) poke() {
	select {
	case ep.idle <- struct{}{}:
	default:
	}
}

// Done is closed when the endpoint has ended; Err then gives the *ConnError.
func (ep *Endpoint) Done() <-chan struct{} { return ep.done }

// Err returns nil while the endpoint runs, then the *ConnError naming why it ended.
func (ep *Endpoint) Err() error {
	if !ep.ended.Load() {
		return nil
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.err
}

// Wait waits until the endpoint has ended and all its goroutines (reader, notification loop,
// request handlers) have returned.
func (ep *Endpoint) Wait() {
	<-ep.done
	ep.wg.Wait()
}

func (ep *Endpoint) shutdown(cause error) error {
	var cerr error
	first := false
	ep.shutOnce.Do(func() {
		first = true
		ep.mu.Lock()
		ce := &ConnError{Cause: cause, Peer: ep.peerErr}
		ep.err = ce
		ep.ended.Store(true)
		pend := ep.pending
		ep.pending, ep.abandoned = map[uint32]*Pending{}, map[uint32]struct{}{}
		ep.mu.Unlock()
		for _, p := range pend {
			p.finish(nil, nil, ce)
		}
		ep.cancel()
		close(ep.done)
		cerr = ep.rwc.Close()
		select {
		case ep.nwake <- struct{}{}:
		default:
		}
	})
	if !first {
		return nil
	}
	return cerr
}

func (ep *Endpoint) report(err error) {
	if ep.opts.OnError != nil {
		ep.opts.OnError(err)
	}
}

// Pending is a call in flight (see Go).
type Pending struct {
	ep     *Endpoint
	Method string
	MsgID  uint32
	done   chan struct{}
	once   sync.Once
	result mpk.RawMessage
	errv   mpk.RawMessage
	err    error
	stop   func() bool
}

func (p *Pending) finish(errv, result []byte, err error) {
	p.once.Do(func() {
		if p.stop != nil {
			p.stop()
		}
		p.errv, p.result, p.err = errv, result, err
		close(p.done)
	})
}

// Done is closed when the call has its outcome.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Cancel abandons the call: it fails with context.Canceled and a late reply is dropped quietly.
func (p *Pending) Cancel() { p.ep.abandon(p, context.Canceled) }

// Result waits for the call's outcome and decodes its result into v (a pointer; *any gets the
// endpoint's `any` decoding; nil discards the result). A response with an error gives a
// *CallError; a cancelled call its context's error (wrapped); an ended connection a *ConnError.
func (p *Pending) Result(v any) error {
	<-p.done
	if p.err != nil {
		return p.err
	}
	if len(p.errv) != 1 || p.errv[0] != 0xc0 {
		ce := &CallError{Method: p.Method, MsgID: p.MsgID, Raw: p.errv}
		val, err := p.ep.decodeAny(p.errv)
		if err != nil {
			val = fmt.Sprintf("undecodable error value (%v)", err)
		}
		ce.Value = val
		return ce
	}
	if err := p.ep.decodeInto(p.result, v); err != nil {
		return fmt.Errorf("mpkrpc: result of %s (msgid %d): %w", p.Method, p.MsgID, err)
	}
	return nil
}

// Value waits for the call's outcome and returns its result decoded into an `any`.
func (p *Pending) Value() (any, error) {
	var v any
	err := p.Result(&v)
	return v, err
}

// Call calls method with args and returns its result decoded into an `any`. ctx bounds the wait:
// when it is done first, the call fails with ctx's error (errors.Is works), the pending entry is
// dropped and a late reply is discarded quietly. Nothing is sent to the peer on cancellation.
func (ep *Endpoint) Call(ctx context.Context, method string, args ...any) (any, error) {
	return ep.Go(ctx, method, args...).Value()
}

// CallInto is Call decoding the result into result (a pointer, or nil to discard it).
func (ep *Endpoint) CallInto(ctx context.Context, result any, method string, args ...any) error {
	return ep.Go(ctx, method, args...).Result(result)
}

// Go sends a request and returns at once; the Pending gives its outcome. An argument that cannot
// be encoded fails the Pending at once, and nothing is sent.
func (ep *Endpoint) Go(ctx context.Context, method string, args ...any) *Pending {
	p := &Pending{ep: ep, Method: method, done: make(chan struct{})}
	if err := ctx.Err(); err != nil {
		p.finish(nil, nil, fmt.Errorf("mpkrpc: %s: %w", method, err))
		return p
	}
	ep.mu.Lock()
	if ep.err != nil {
		ep.mu.Unlock()
		p.finish(nil, nil, ep.err)
		return p
	}
	p.MsgID = ep.allocID()
	ep.pending[p.MsgID] = p
	ep.mu.Unlock()

	bp := getBuf()
	defer putBuf(bp)
	b := mpk.AppendArrayHeader((*bp)[:0], 4)
	b = mpk.AppendInt(b, typeRequest)
	b = mpk.AppendUint(b, uint64(p.MsgID))
	b = mpk.AppendString(b, method)
	b, err := ep.appendParams(b, args)
	if b != nil {
		*bp = b // grown: keep the larger buffer
	}
	if err != nil {
		// Nothing was sent: the id is free again.
		ep.mu.Lock()
		delete(ep.pending, p.MsgID)
		ep.mu.Unlock()
		ep.poke()
		p.finish(nil, nil, fmt.Errorf("mpkrpc: arguments of %s: %w", method, err))
		return p
	}
	if ctx.Done() != nil {
		ep.mu.Lock()
		if ep.pending[p.MsgID] == p {
			// Set under ep.mu: whoever finishes p (reader, shutdown, abandon) takes ep.mu first.
			p.stop = context.AfterFunc(ctx, func() { ep.abandon(p, ctx.Err()) })
		}
		ep.mu.Unlock()
	}
	if err := ep.write(b, p, false); err != nil {
		ep.mu.Lock()
		if ep.pending[p.MsgID] == p {
			delete(ep.pending, p.MsgID)
		}
		ep.mu.Unlock()
		p.finish(nil, nil, fmt.Errorf("mpkrpc: sending %s: %w", method, err))
	}
	return p
}

// allocID returns the next free msgid (ep.mu held): ids count up from 1, wrap after 2^32-1 back
// to 1 (0 is left for msgid-0 error responses to malformed messages) and skip ids still pending,
// cancelled ones included (their reply may still come).
func (ep *Endpoint) allocID() uint32 {
	for {
		id := ep.nextID
		ep.nextID++
		if ep.nextID == 0 {
			ep.nextID = 1
		}
		if _, busy := ep.pending[id]; busy {
			continue
		}
		if _, busy := ep.abandoned[id]; busy {
			continue
		}
		return id
	}
}

func (ep *Endpoint) abandon(p *Pending, err error) {
	ep.mu.Lock()
	if ep.pending[p.MsgID] == p {
		delete(ep.pending, p.MsgID)
		ep.abandoned[p.MsgID] = struct{}{}
	}
	ep.mu.Unlock()
	p.finish(nil, nil, fmt.Errorf("mpkrpc: %s (msgid %d): %w", p.Method, p.MsgID, err))
	ep.poke()
}

// Notify sends a notification. It returns once the message is written.
func (ep *Endpoint) Notify(method string, args ...any) error {
	if err := ep.Err(); err != nil {
		return err
	}
	bp := getBuf()
	defer putBuf(bp)
	b := mpk.AppendArrayHeader((*bp)[:0], 3)
	b = mpk.AppendInt(b, typeNotification)
	b = mpk.AppendString(b, method)
	b, err := ep.appendParams(b, args)
	if b != nil {
		*bp = b
	}
	if err != nil {
		return fmt.Errorf("mpkrpc: arguments of %s: %w", method, err)
	}
	return ep.write(b, nil, true)
}

// appendParams appends the params array of args to b.
func (ep *Endpoint) appendParams(b []byte, args []any) ([]byte, error) {
	b = mpk.AppendArrayHeader(b, uint32(len(args)))
	for i, a := range args {
		var err error
		if b, err = ep.appendValue(b, a); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
	}
	return b, nil
}

// respond sends a response. It returns once the response is written, or queued behind a write in
// progress (see write); with wait, only once it is written.
func (ep *Endpoint) respond(id uint32, errv any, result any, wait bool) {
	bp := getBuf()
	defer putBuf(bp)
	b := mpk.AppendArrayHeader((*bp)[:0], 4)
	b = mpk.AppendInt(b, typeResponse)
	b = mpk.AppendUint(b, uint64(id))
	head := len(b)
	b, err := ep.appendValue(b, errv)
	if err == nil {
		b, err = ep.appendValue(b, result)
	}
	if err != nil {
		b = mpk.AppendArrayHeader(b[:head], 2)
		b = mpk.AppendInt(b, NeovimException)
		b = mpk.AppendString(b, "mpkrpc: cannot encode the response: "+err.Error())
		b = mpk.AppendNil(b)
	}
	*bp = b
	_ = ep.write(b, nil, wait) // a failed write fails every later one; the reader ends the connection
}

// The encode buffers of outgoing messages are reused: a message is encoded into a pooled buffer,
// written whole (an io.Writer must not retain what it is given) and the buffer goes back to the
// pool. Measured on the RPC bench (bench/rpc, an 8 KiB bin echoed, Go client CPU profile): a
// fresh buffer per message, grown by append from 64 bytes, made about half of the allocated bytes
// of a call, and the garbage collector's work with them. Buffers over pooledBufMax are dropped
// rather than kept. Without the pool (getBuf returning a fresh buffer) everything works the same.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

const pooledBufMax = 1 << 20

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(bp *[]byte) {
	if cap(*bp) > pooledBufMax {
		return
	}
	*bp = (*bp)[:0]
	bufPool.Put(bp)
}

// appendValue appends v's encoding (registered ext types converted) to b.
func (ep *Endpoint) appendValue(b []byte, v any) ([]byte, error) {
	if v == nil {
		return mpk.AppendNil(b), nil
	}
	w, err := ep.opts.Ext.toWire(v)
	if err != nil {
		return b, err
	}
	return mpk.MarshalAppend(b, w)
}

// decodeAny decodes one value into an `any` with the endpoint's options.
func (ep *Endpoint) decodeAny(raw []byte) (any, error) {
	var v any
	if err := ep.dopts.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if ep.plain {
		return v, nil
	}
	return ep.opts.Ext.fromWire(v, ep.opts.BinAsString)
}

// decodeInto decodes raw into dst (a pointer; nil discards).
func (ep *Endpoint) decodeInto(raw []byte, dst any) error {
	switch d := dst.(type) {
	case nil:
		return nil
	case *any:
		v, err := ep.decodeAny(raw)
		*d = v
		return err
	case *mpk.RawMessage:
		*d = append((*d)[:0], raw...)
		return nil
	case *[]byte:
		if binInPlace(raw, d) {
			return nil
		}
	}
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("mpkrpc: decode target %T is not a non-nil pointer", dst)
	}
	if !ep.plain && holdsInterface(rv.Type().Elem(), 0) {
		v, err := ep.decodeAny(raw)
		if err != nil {
			return err
		}
		return assign(rv.Elem(), v)
	}
	err := ep.dopts.Unmarshal(raw, dst)
	var te *mpk.UnmarshalTypeError
	if err != nil && errors.As(err, &te) && !ep.opts.Ext.empty() {
		// An ext of this endpoint's registry into a typed target (a Buffer, a []Window).
		if v, err2 := ep.decodeAny(raw); err2 == nil && assign(rv.Elem(), v) == nil {
			return nil
		}
	}
	return err
}

// binInPlace sets *dst to the payload of raw when raw is exactly one bin, without copying it: raw
// is always a part of one received message's own bytes (readLoop gives every message a buffer of
// its own, which nothing else reads or writes once the message is parsed), so the payload can be
// handed out as it is, the way mpk's decoder hands out slices of its arena. Measured on the RPC
// bench (bench/rpc, an 8 KiB bin echoed): the general path allocated twice the bin's size (an arena
// chunk sized for the rest of the input) and copied it, once for the handler's argument and once
// for the caller's result. Anything else (a str, nil, a malformed value) returns false, and the
// caller takes the general path (Unmarshal), which is also what decodes a bin nested in a value.
func binInPlace(raw []byte, dst *[]byte) bool {
	if len(raw) == 0 || (raw[0] != 0xc4 && raw[0] != 0xc5 && raw[0] != 0xc6) {
		return false
	}
	b, rest, err := mpk.ReadBytes(raw)
	if err != nil || len(rest) != 0 {
		return false
	}
	if b == nil {
		b = []byte{} // a bin of 0 bytes is empty, not nil, as Unmarshal gives it
	}
	*dst = b[:len(b):len(b)]
	return true
}

// holdsInterface reports whether values of t hold an interface directly or through slices,
// arrays, maps and pointers (not through structs): where the `any` conversions of the endpoint
// apply.
func holdsInterface(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return holdsInterface(t.Elem(), depth+1)
	case reflect.Map:
		return holdsInterface(t.Key(), depth+1) || holdsInterface(t.Elem(), depth+1)
	}
	return false
}

// message is one parsed MessagePack-RPC message.
type message struct {
	kind   int
	msgid  uint32
	method string
	params []byte // the params array, whole
	errv   []byte
	result []byte
}

// parse checks that raw (one well-formed value) is a message and splits it.
func parse(raw []byte) (m message, reason string) {
	n, rest, err := mpk.ReadArrayHeader(raw)
	if err != nil {
		return m, "a message must be an array"
	}
	if n < 3 || n > 4 {
		return m, fmt.Sprintf("a message must be an array of 3 or 4 elements, not %d", n)
	}
	kind, rest, err := mpk.ReadInt(rest)
	if err != nil || kind < 0 || kind > 2 {
		return m, "the message type must be 0, 1 or 2"
	}
	m.kind = int(kind)
	if want := 4 - int(kind)/2; n != want {
		return m, fmt.Sprintf("a message of type %d must have %d elements, not %d", kind, want, n)
	}
	if kind != typeNotification {
		id, r, err := mpk.ReadUint(rest)
		if err != nil || id > math.MaxUint32 {
			return m, "the msgid must be an unsigned 32-bit int"
		}
		m.msgid, rest = uint32(id), r
	}
	if kind == typeResponse {
		after, err := mpk.Skip(rest)
		if err != nil {
			return m, "malformed error value"
		}
		m.errv = rest[:len(rest)-len(after)]
		m.result = after
		return m, ""
	}
	name, r, err := mpk.ReadStringBytes(rest)
	if err != nil {
		name, r, err = mpk.ReadBytes(rest) // some peers send the method as bin
		if err != nil {
			return m, "the method must be a str"
		}
	}
	m.method = string(name)
	if _, _, err := mpk.ReadArrayHeader(r); err != nil {
		return m, "the params must be an array"
	}
	m.params = r
	return m, ""
}

// readBufSize is the read buffer between the stream and the decoder: the decoder asks for 4 KiB
// at a time, or what the rest of the message it is reading needs, so without it every message of
// a few KiB took a read system call or more of its own. Measured on the RPC bench (bench/rpc, Go,
// 64 calls of 8 KiB in flight): with 64 KiB, one read takes several messages.
const readBufSize = 64 << 10

func (ep *Endpoint) readLoop() {
	defer ep.wg.Done()
	dec := mpk.NewDecoder(bufio.NewReaderSize(ep.rwc, readBufSize))
	dec.SetOptions(mpk.DecodeOptions{Limits: &ep.lim})
	for {
		off := dec.InputOffset()
		// A new buffer for every message, never reused: binInPlace hands out parts of it.
		var raw mpk.RawMessage
		if err := dec.Decode(&raw); err != nil {
			var de *mpk.DecodeError
			if errors.As(err, &de) && de.Kind != mpk.Truncated && ep.Err() == nil {
				ep.respond(0, []any{int64(NeovimException), "mpkrpc: malformed input, closing: " + err.Error()}, nil, true) // written before the stream closes
			}
			ep.shutdown(err)
			return
		}
		m, reason := parse(raw)
		if reason != "" {
			ep.report(&ProtocolError{Offset: off, Reason: reason})
			// Neovim 0.7.2 answers a value that is no message with type 1 (Validation), and bytes
			// that are not MessagePack (above) with type 0 (Exception): so does mpkrpc.
			ep.respond(0, []any{int64(NeovimValidation), "mpkrpc: invalid message: " + reason}, nil, false)
			continue
		}
		switch m.kind {
		case typeResponse:
			ep.mu.Lock()
			p := ep.pending[m.msgid]
			if p != nil {
				delete(ep.pending, m.msgid)
			}
			_, late := ep.abandoned[m.msgid]
			if late {
				delete(ep.abandoned, m.msgid)
			}
			ep.mu.Unlock()
			if p != nil {
				p.finish(m.errv, m.result, nil)
				ep.poke()
			} else if !late {
				if m.msgid == 0 {
					ep.mu.Lock()
					ep.peerErr = describe(m.errv)
					ep.mu.Unlock()
				}
				ep.report(&ProtocolError{Offset: off, Reason: fmt.Sprintf("response for msgid %d, which no call waits for (error %s)", m.msgid, describe(m.errv))})
			}
		case typeRequest:
			ep.nmu.Lock()
			if ep.running < ep.maxRun {
				ep.running++
				ep.nmu.Unlock()
				// To a request goroutine waiting for work, else to a new one.
				select {
				case ep.work <- m:
				default:
					ep.wg.Add(1)
					go ep.serveLoop(m)
				}
				ep.nmu.Lock()
			} else {
				ep.reqs = append(ep.reqs, raw) // parsed again when served: a queued request costs its bytes and a slice header
			}
			ep.nmu.Unlock()
		case typeNotification:
			ep.nmu.Lock()
			ep.notes = append(ep.notes, raw)
			ep.nmu.Unlock()
			select {
			case ep.nwake <- struct{}{}:
			default:
			}
		}
	}
}

func describe(raw []byte) string {
	var v any
	if mpk.Unmarshal(raw, &v) != nil {
		return "undecodable"
	}
	if v == nil {
		return "nil"
	}
	return ErrorMessage(v)
}

func (ep *Endpoint) noteLoop() {
	defer ep.wg.Done()
	for {
		ep.nmu.Lock()
		if len(ep.notes) > 0 && !ep.dropNotes {
			raw := ep.notes[0]
			ep.notes[0] = nil
			ep.notes = ep.notes[1:]
			ep.nmu.Unlock()
			m, _ := parse(raw)
			ep.notify(m)
			continue
		}
		ep.nmu.Unlock()
		select {
		case <-ep.nwake:
		case <-ep.done:
			// The peer ended the connection: what it sent before is still handled (the
			// reader queued it all before it ended the endpoint). After Close it is dropped.
			ep.nmu.Lock()
			finished := len(ep.notes) == 0 || ep.dropNotes
			ep.nmu.Unlock()
			if finished {
				return
			}
		}
	}
}

func (ep *Endpoint) notify(m message) {
	h := ep.handlers.lookup(m.method)
	if h == nil {
		ep.report(fmt.Errorf("mpkrpc: notification %q: no handler", m.method))
		return
	}
	if _, err := h.invoke(ep.ctx, ep, m.params); err != nil {
		ep.report(fmt.Errorf("mpkrpc: notification %q: %w", m.method, err))
	}
}

// maxIdleWorkers request goroutines of an endpoint wait for the next request when they have none
// left to serve, instead of returning. A new goroutine starts with a small stack, and serving a
// request (reflection, the decoder) grows it by copying: measured on the RPC bench (bench/rpc, Go
// server, 64 calls in flight), the stack growth of a goroutine per request was a fifth of the
// server's CPU time. A request finds a waiting goroutine through ep.work when one is ready, else a
// new one starts, as before; beyond maxIdleWorkers they return once idle. With 8 kept, 64 calls
// in flight still started a goroutine for most requests of a burst: copystack (stack growth in
// reflect.Value.Call and the decoder) was 12% of the server's CPU time in a steady-state perf
// profile of the same bench, and the server's CPU per call fell from about 29 to 22-25 µs with
// 64 kept. An idle goroutine costs its stack, which the garbage collector shrinks while it waits.
const maxIdleWorkers = 64

// serveLoop serves m, then the queued requests, then waits (up to maxIdleWorkers goroutines) for
// a request handed over through ep.work, until the endpoint ends.
func (ep *Endpoint) serveLoop(m message) {
	defer ep.wg.Done()
	for {
		ep.serve(m)
		ep.nmu.Lock()
		if len(ep.reqs) > 0 && !ep.dropNotes {
			raw := ep.reqs[0]
			ep.reqs[0] = nil
			ep.reqs = ep.reqs[1:]
			ep.nmu.Unlock()
			m, _ = parse(raw)
			continue
		}
		ep.running--
		wait := ep.idleWorkers < maxIdleWorkers && !ep.dropNotes
		if wait {
			ep.idleWorkers++
		}
		ep.nmu.Unlock()
		ep.poke()
		if !wait {
			return
		}
		handed := false
		select {
		case m = <-ep.work: // counted in ep.running by the reader
			handed = true
		case <-ep.done:
		}
		ep.nmu.Lock()
		ep.idleWorkers--
		ep.nmu.Unlock()
		if !handed {
			return
		}
	}
}

func (ep *Endpoint) serve(m message) {
	if ep.Err() != nil {
		return // nobody can read the response
	}
	h := ep.handlers.lookup(m.method)
	if h == nil {
		ep.respond(m.msgid, []any{int64(NeovimException), "Invalid method: " + m.method}, nil, false)
		return
	}
	result, err := h.invoke(ep.ctx, ep, m.params)
	if err != nil {
		ep.respond(m.msgid, errorValue(err), nil, false)
		return
	}
	ep.respond(m.msgid, nil, result, false)
}

// errorValue is the error value sent for a handler's error.
func errorValue(err error) any {
	var ve *valueError
	if errors.As(err, &ve) {
		return ve.v
	}
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Value
	}
	return []any{int64(NeovimException), err.Error()}
}
