// Command rpcdriver is go/mpkrpc's driver for the cross-language RPC matrix (spec/rpc/README.md):
//
//	rpcdriver serve ADDR              serve the matrix methods; prints "listening ADDR" once ready,
//	                                  stops when stdin ends
//	rpcdriver client ADDR SCENARIO    run one scenario against a server (its input, if any, is a
//	                                  JSON object on stdin); prints one JSON line
//	rpcdriver roundtrip               decode each hex of {"values": [...]} on stdin into an `any`
//	                                  and encode it again, without RPC; prints one JSON line
//
// ADDR is "unix:PATH" or "tcp:HOST:PORT".
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/mpkrpc"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "roundtrip" {
		var input map[string]json.RawMessage
		if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
			fail("input: " + err.Error())
		}
		vals, errs := hexValues(input, "values")
		results := make([]any, len(vals))
		for i, v := range vals {
			if errs[i] != nil {
				results[i] = map[string]string{"skip": errs[i].Error()}
			} else {
				results[i] = reencode(v)
			}
		}
		b, _ := json.Marshal(map[string]any{"results": results})
		os.Stdout.Write(append(b, '\n'))
		return
	}
	if len(os.Args) < 3 {
		fail("usage: rpcdriver serve ADDR | client ADDR SCENARIO")
	}
	network, addr, ok := strings.Cut(os.Args[2], ":")
	if !ok {
		fail("bad address " + os.Args[2])
	}
	switch os.Args[1] {
	case "serve":
		serve(network, addr)
	case "client":
		if len(os.Args) < 4 {
			fail("client needs a scenario")
		}
		client(network, addr, os.Args[3])
	default:
		fail("unknown mode " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "rpcdriver:", msg)
	os.Exit(2)
}

func serve(network, addr string) {
	var srv mpkrpc.Server
	srv.Options.OnError = func(error) {} // protocol violations are the runner's hostile cases
	srv.Register("echo", func(x any) any { return x })
	srv.Register("add", func(a, b int64) int64 { return a + b })
	srv.Register("fail", func(v any) (any, error) { return nil, mpkrpc.Error(v) })
	srv.Register("sleep_echo", func(ctx context.Context, ms int64, x any) any {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
		}
		return x
	})
	srv.Register("callback", func(ctx context.Context, method string, arg any) (any, error) {
		return mpkrpc.FromContext(ctx).Call(ctx, method, arg)
	})
	srv.Register("notify_me", func(ctx context.Context, n int64) (int64, error) {
		ep := mpkrpc.FromContext(ctx)
		for i := int64(0); i < n; i++ {
			if err := ep.Notify("tick", i); err != nil {
				return 0, err
			}
		}
		return n, nil
	})
	l, err := srv.Listen(network, addr)
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("listening %s:%s\n", network, l.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
}

func client(network, addr, scenario string) {
	ctx := context.Background()
	ep, err := mpkrpc.Dial(ctx, network, addr, nil)
	if err != nil {
		fail(err.Error())
	}
	var input map[string]json.RawMessage
	if scenario == "corpus" || scenario == "errors" {
		if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
			fail("input: " + err.Error())
		}
	}
	var out any
	switch scenario {
	case "corpus":
		out = corpus(ctx, ep, input)
	case "errors":
		out = errorValues(ctx, ep, input)
	case "pipeline":
		out = pipeline(ctx, ep)
	case "notify":
		out = notify(ctx, ep)
	case "callback":
		out = callback(ctx, ep)
	case "timeout":
		out = timeout(ctx, ep)
	case "disconnect":
		out = disconnect(ctx, ep)
	default:
		fail("unknown scenario " + scenario)
	}
	ep.Close()
	b, err := json.Marshal(out)
	if err != nil {
		fail(err.Error())
	}
	os.Stdout.Write(append(b, '\n'))
}

// hexValues reads input[key], a list of hex strings, and decodes each to an `any` with mpk. A
// value an `any` cannot hold (a map with an array key) gets its decode error instead.
func hexValues(input map[string]json.RawMessage, key string) ([]any, []error) {
	var hexes []string
	if err := json.Unmarshal(input[key], &hexes); err != nil {
		fail("input " + key + ": " + err.Error())
	}
	vals := make([]any, len(hexes))
	errs := make([]error, len(hexes))
	for i, h := range hexes {
		b, err := hex.DecodeString(h)
		if err != nil {
			fail(err.Error())
		}
		errs[i] = mpk.Unmarshal(b, &vals[i])
	}
	return vals, errs
}

func reencode(v any) any {
	b, err := mpk.Marshal(v)
	if err != nil {
		return map[string]string{"encode_error": err.Error()}
	}
	return hex.EncodeToString(b)
}

// corpus: echo(x) for every value. Each answer is {"local": the hex mpk re-encodes the decoded
// value to (no RPC), "echo": the hex it re-encodes echo's result to}, or {"skip": why} for a value
// an `any` cannot hold.
func corpus(ctx context.Context, ep *mpkrpc.Endpoint, input map[string]json.RawMessage) any {
	vals, errs := hexValues(input, "values")
	results := make([]any, len(vals))
	for i, v := range vals {
		if errs[i] != nil {
			results[i] = map[string]string{"skip": errs[i].Error()}
			continue
		}
		local := reencode(v)
		r, err := ep.Call(ctx, "echo", v)
		if err != nil {
			results[i] = map[string]any{"local": local, "error": err.Error()}
			continue
		}
		results[i] = map[string]any{"local": local, "echo": reencode(r)}
	}
	return map[string]any{"results": results}
}

// errorValues: fail(v) for every value; each answer is the re-encoded error value.
func errorValues(ctx context.Context, ep *mpkrpc.Endpoint, input map[string]json.RawMessage) any {
	vals, errs := hexValues(input, "values")
	results := make([]any, len(vals))
	for i, v := range vals {
		if errs[i] != nil {
			fail(errs[i].Error())
		}
		_, err := ep.Call(ctx, "fail", v)
		var ce *mpkrpc.CallError
		if errors.As(err, &ce) {
			results[i] = reencode(ce.Value)
		} else {
			results[i] = map[string]string{"not_a_call_error": fmt.Sprint(err)}
		}
	}
	// the endpoint's own error shapes: an unknown method and a wrong params count
	extra := map[string]any{}
	for name, call := range map[string][]any{"unknown": {"no_such_method"}, "arity": {"add", 1}} {
		_, err := ep.Call(ctx, call[0].(string), call[1:]...)
		var ce *mpkrpc.CallError
		if errors.As(err, &ce) {
			extra[name] = ce.Value
		} else {
			extra[name] = fmt.Sprint("no CallError: ", err)
		}
	}
	return map[string]any{"results": results, "unknown": extra["unknown"], "arity": extra["arity"]}
}

// Pipeline: N calls sleep_echo(delay(i), i) all in flight at once; delays are a fixed permutation
// so replies come back in another order than sent. Reports wrong results and how many replies
// arrived before a reply to an earlier request.
const pipelineN = 10000

func delay(i int) int64 { return int64((i * 7919) % 50) } // 0..49 ms, shuffled

func pipeline(ctx context.Context, ep *mpkrpc.Endpoint) any {
	ps := make([]*mpkrpc.Pending, pipelineN)
	for i := range ps {
		ps[i] = ep.Go(ctx, "sleep_echo", delay(i), i)
	}
	var mu sync.Mutex
	var order []int
	wrong := 0
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func(i int, p *mpkrpc.Pending) {
			defer wg.Done()
			var got int
			err := p.Result(&got)
			mu.Lock()
			defer mu.Unlock()
			order = append(order, i)
			if err != nil || got != i {
				wrong++
			}
		}(i, p)
	}
	wg.Wait()
	return map[string]any{"count": len(order), "wrong": wrong, "out_of_order": inversions(order)}
}

// inversions counts the replies that completed after a reply to a later request.
func inversions(order []int) int {
	n, max := 0, -1
	for _, i := range order {
		if i < max {
			n++
		} else {
			max = i
		}
	}
	return n
}

// notify: notify_me(50); the ticks' values in the order handled, and how many were handled when
// the call returned (Go runs notification handlers on their own goroutine: see go/README.md, so
// the driver waits for all of them before reporting).
func notify(ctx context.Context, ep *mpkrpc.Endpoint) any {
	const n = 50
	var mu sync.Mutex
	var ticks []int64
	all := make(chan struct{})
	ep.Register("tick", func(i int64) {
		mu.Lock()
		defer mu.Unlock()
		ticks = append(ticks, i)
		if len(ticks) == n {
			close(all)
		}
	})
	r, err := ep.Call(ctx, "notify_me", n)
	mu.Lock()
	before := len(ticks)
	mu.Unlock()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	return map[string]any{"result": r, "error": errString(err), "ticks": ticks, "handled_before_reply": before, "handlers_run_before_reply": false}
}

// callback: the server calls our plus_one(41) while our callback call is pending.
func callback(ctx context.Context, ep *mpkrpc.Endpoint) any {
	ep.Register("plus_one", func(x int64) int64 { return x + 1 })
	r, err := ep.Call(ctx, "callback", "plus_one", 41)
	return map[string]any{"result": r, "error": errString(err)}
}

// timeout: sleep_echo(300, "late") with a 50 ms deadline and another one cancelled once sent,
// then an echo while their late replies are still to come and a call answered after them.
func timeout(ctx context.Context, ep *mpkrpc.Endpoint) any {
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := ep.Call(tctx, "sleep_echo", 300, "late")
	cancel()
	timedOut := errors.Is(err, context.DeadlineExceeded)
	// and one cancelled by the caller after it was sent
	p := ep.Go(ctx, "sleep_echo", 300, "late too")
	p.Cancel()
	_, errC := p.Value()
	a, errA := ep.Call(ctx, "echo", "during")
	// sent after the timed-out call and answered 400 ms later, so its reply comes after the late
	// one, which must be discarded quietly meanwhile
	b, errB := ep.Call(ctx, "sleep_echo", 400, "after")
	return map[string]any{"timed_out": timedOut, "timeout_error": errString(err), "during": a, "after": b,
		"cancelled": errors.Is(errC, context.Canceled), "cancel_error": errString(errC),
		"errors": []any{errString(errA), errString(errB)}}
}

// disconnect (against the runner's raw server): echo("first") gets a stray response for an
// unknown msgid and then its reply; echo("second") gets part of its reply, then the connection ends.
func disconnect(ctx context.Context, ep *mpkrpc.Endpoint) any {
	first, err1 := ep.Call(ctx, "echo", "first")
	_, err2 := ep.Call(ctx, "echo", "second")
	var ce *mpkrpc.ConnError
	return map[string]any{"first": first, "first_error": errString(err1), "second_error": errString(err2),
		"connection_error": errors.As(err2, &ce)}
}

func errString(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}
