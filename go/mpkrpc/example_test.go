package mpkrpc_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"mpk.dev/go/mpk/mpkrpc"
)

// The seed's stream server (put and get of fruit colours) as an RPC service and its client.
func Example() {
	var colours sync.Map
	var srv mpkrpc.Server
	srv.Register("put", func(fruit, colour string) { colours.Store(fruit, colour) })
	srv.Register("get", func(fruit string) (any, error) {
		if c, ok := colours.Load(fruit); ok {
			return c, nil
		}
		return nil, fmt.Errorf("no colour for %s", fruit)
	})
	l, err := srv.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	client, err := mpkrpc.Dial(ctx, "tcp", l.Addr().String(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Call(ctx, "put", "banana", "yellow"); err != nil {
		log.Fatal(err)
	}
	colour, err := client.Call(ctx, "get", "banana")
	fmt.Println(colour, err)
	_, err = client.Call(ctx, "get", "kiwi")
	fmt.Println(err)
	// Output:
	// yellow <nil>
	// mpkrpc: get (msgid 3) failed: no colour for kiwi
}
