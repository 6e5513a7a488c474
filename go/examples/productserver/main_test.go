package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/mpkhttp"
)

// TestProductServer talks to the server over loopback (httptest listens on 127.0.0.1).
func TestProductServer(t *testing.T) {
	srv := httptest.NewServer(newStore().routes())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/products/191919191919")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != mpkhttp.ContentType {
		t.Fatalf("GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var p Product
	if err := mpk.Unmarshal(body, &p); err != nil || p.Price != 18900 || len(p.Colors) != 3 {
		t.Fatalf("GET body: %+v %v", p, err)
	}

	p.Id, p.Name = 7, "Camp Chair"
	b, _ := mpk.Marshal(&p)
	resp, err = http.Post(srv.URL+"/products", "application/x-msgpack", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL + "/products/7")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var back Product
	if err := mpk.Unmarshal(body, &back); err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("stored product: %+v %v", back, err)
	}

	resp, err = http.Post(srv.URL+"/products", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("POST JSON: %d", resp.StatusCode)
	}
	resp, err = http.Post(srv.URL+"/products", mpkhttp.ContentType, bytes.NewReader(b[:5]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("POST truncated: %d", resp.StatusCode)
	}
}
