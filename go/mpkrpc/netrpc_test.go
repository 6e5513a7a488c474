package mpkrpc

import (
	"errors"
	"net"
	"net/rpc"
	"strings"
	"testing"
)

type Args struct{ A, B int }

type Arith struct{}

func (Arith) Mul(a Args, reply *int) error { *reply = a.A * a.B; return nil }
func (Arith) Div(a Args, reply *int) error {
	if a.B == 0 {
		return errors.New("divide by zero")
	}
	*reply = a.A / a.B
	return nil
}

func netRPCServer(t *testing.T) net.Listener {
	srv := rpc.NewServer()
	if err := srv.Register(Arith{}); err != nil {
		t.Fatal(err)
	}
	l := listen(t)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go srv.ServeCodec(NewServerCodec(c))
		}
	}()
	return l
}

func TestNetRPCCodecs(t *testing.T) {
	l := netRPCServer(t)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client := rpc.NewClientWithCodec(NewClientCodec(c))
	defer client.Close()
	var r int
	if err := client.Call("Arith.Mul", Args{6, 7}, &r); err != nil || r != 42 {
		t.Fatalf("Mul = %d, %v", r, err)
	}
	err = client.Call("Arith.Div", Args{1, 0}, &r)
	if _, ok := err.(rpc.ServerError); !ok || err.Error() != "divide by zero" {
		t.Fatalf("Div by zero: %#v", err)
	}
	// Many calls at once.
	calls := make([]*rpc.Call, 200)
	for i := range calls {
		calls[i] = client.Go("Arith.Mul", Args{i, 3}, new(int), nil)
	}
	for i, call := range calls {
		<-call.Done
		if call.Error != nil || *call.Reply.(*int) != 3*i {
			t.Fatalf("call %d: %v %v", i, *call.Reply.(*int), call.Error)
		}
	}
}

// The codecs speak the Endpoint's wire format: an Endpoint calls a net/rpc server, and a net/rpc
// client calls an Endpoint's handlers.
func TestNetRPCWithEndpoint(t *testing.T) {
	l := netRPCServer(t)
	ctx := ctxT(t)
	ep, err := Dial(ctx, "tcp", l.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	var r int
	if err := ep.CallInto(ctx, &r, "Arith.Mul", Args{3, 5}); err != nil || r != 15 {
		t.Fatalf("Endpoint -> net/rpc: %d, %v", r, err)
	}
	_, err = ep.Call(ctx, "Arith.Div", Args{3, 0})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Message() != "divide by zero" {
		t.Fatalf("Endpoint -> net/rpc error: %v", err)
	}

	// Not one param: an error response, and the connection goes on.
	_, err = ep.Call(ctx, "Arith.Mul", Args{1, 2}, Args{3, 4})
	if !errors.As(err, &ce) || !strings.Contains(ce.Message(), "exactly one argument, got 2") {
		t.Fatalf("two params: %v", err)
	}
	if err := ep.CallInto(ctx, &r, "Arith.Mul", Args{2, 5}); err != nil || r != 10 {
		t.Fatalf("after two params: %d, %v", r, err)
	}

	var s Server
	s.Register("Arith.Mul", func(a Args) int { return a.A * a.B })
	s.Register("Arith.Fail", func(a Args) (int, error) { return 0, errors.New("nope") })
	sl, err := s.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", sl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client := rpc.NewClientWithCodec(NewClientCodec(c))
	defer client.Close()
	if err := client.Call("Arith.Mul", Args{4, 5}, &r); err != nil || r != 20 {
		t.Fatalf("net/rpc -> Endpoint: %d, %v", r, err)
	}
	if err := client.Call("Arith.Fail", Args{}, &r); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("net/rpc -> Endpoint error: %v", err)
	}
}
