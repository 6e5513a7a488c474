// Command productserver serves the seed's Product over HTTP as MessagePack:
//
//	GET  /products/{id}  the product, as application/vnd.msgpack
//	POST /products       a product in the body (application/vnd.msgpack, application/msgpack or
//	                     application/x-msgpack), stored and echoed back with 201
//
// Run it with `go run ./examples/productserver -addr 127.0.0.1:8080`.
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
	"sync"

	"mpk.dev/go/mpk/mpkhttp"
)

// Product is the seed's struct.
type Product struct {
	Id          int64    `msgpack:"id"`
	Name        string   `msgpack:"name"`
	Description string   `msgpack:"description"`
	Price       int32    `msgpack:"price"`
	Colors      []string `msgpack:"colors"`
}

// store keeps products in memory.
type store struct {
	mu       sync.RWMutex
	products map[int64]Product
}

func newStore() *store {
	return &store{products: map[int64]Product{
		191919191919: {
			Id:          191919191919,
			Name:        "Men's Trail Running Shoe",
			Description: "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.",
			Price:       18900,
			Colors:      []string{"Black", "Forest Green", "Slate Blue"},
		},
	}}
}

// maxBody bounds a request body; a Product is a few hundred bytes.
const maxBody = 64 << 10

// routes returns the server's handler.
func (s *store) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /products/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		s.mu.RLock()
		p, ok := s.products[id]
		s.mu.RUnlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if err := mpkhttp.Write(w, http.StatusOK, &p); err != nil {
			log.Print(err)
		}
	})
	mux.HandleFunc("POST /products", func(w http.ResponseWriter, r *http.Request) {
		var p Product
		if err := mpkhttp.Read(r, &p, maxBody); err != nil {
			http.Error(w, err.Error(), mpkhttp.Status(err))
			return
		}
		s.mu.Lock()
		s.products[p.Id] = p
		s.mu.Unlock()
		if err := mpkhttp.Write(w, http.StatusCreated, &p); err != nil {
			log.Print(err)
		}
	})
	return mux
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	log.Printf("serving products on http://%s", *addr)
	log.Fatal(http.ListenAndServe(*addr, newStore().routes()))
}
