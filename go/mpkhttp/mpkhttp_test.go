package mpkhttp

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"mpk.dev/go/mpk"
)

type item struct {
	Name string `msgpack:"name"`
	N    int    `msgpack:"n"`
}

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	if err := Write(rec, http.StatusCreated, item{"a", 1}); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusCreated || rec.Header().Get("Content-Type") != ContentType {
		t.Fatalf("code %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var back item
	if err := mpk.Unmarshal(rec.Body.Bytes(), &back); err != nil || back != (item{"a", 1}) {
		t.Fatalf("body %x: %v %v", rec.Body.Bytes(), back, err)
	}
}

func TestReadAcceptsTheThreeTypes(t *testing.T) {
	body, _ := mpk.Marshal(item{"b", 2})
	for _, ct := range []string{"application/vnd.msgpack", "application/msgpack", "application/x-msgpack; charset=binary"} {
		req := httptest.NewRequest("POST", "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		var got item
		if err := Read(req, &got, 1<<10); err != nil || got != (item{"b", 2}) {
			t.Errorf("%s: %v %v", ct, got, err)
		}
	}
}

func TestReadRejects(t *testing.T) {
	body, _ := mpk.Marshal(item{"b", 2})
	cases := []struct {
		ct   string
		body []byte
		max  int64
		code int
	}{
		{"application/json", body, 1 << 10, http.StatusUnsupportedMediaType},
		{"", body, 1 << 10, http.StatusUnsupportedMediaType},
		{"application/msgpack", body, 3, http.StatusRequestEntityTooLarge},
		{"application/msgpack", body[:len(body)-1], 1 << 10, http.StatusBadRequest},
	}
	for _, c := range cases {
		req := httptest.NewRequest("POST", "/", bytes.NewReader(c.body))
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		var got item
		if code := Status(Read(req, &got, c.max)); code != c.code {
			t.Errorf("%q, %d bytes, max %d: status %d, want %d", c.ct, len(c.body), c.max, code, c.code)
		}
	}
}

// TestReadMaxInt64 reads with the largest limit: maxBytes+1 must not overflow into a negative
// limit that refuses every body.
func TestReadMaxInt64(t *testing.T) {
	for _, max := range []int64{math.MaxInt64, math.MaxInt64 - 1, 1 << 40} {
		req := httptest.NewRequest("POST", "/", bytes.NewReader([]byte{0x92, 0x01, 0x02}))
		req.Header.Set("Content-Type", ContentType)
		var got []int
		if err := Read(req, &got, max); err != nil || len(got) != 2 || got[0] != 1 || got[1] != 2 {
			t.Errorf("limit %d: %v %v", max, got, err)
		}
	}
}
