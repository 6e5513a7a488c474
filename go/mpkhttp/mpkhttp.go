// Package mpkhttp writes and reads MessagePack bodies over net/http: responses go out as
// application/vnd.msgpack, and requests are accepted as application/vnd.msgpack,
// application/msgpack or application/x-msgpack.
package mpkhttp

import (
	"errors"
	"io"
	"math"
	"mime"
	"net/http"

	"mpk.dev/go/mpk"
)

// ContentType is the media type of the responses Write sends.
const ContentType = "application/vnd.msgpack"

// accepted lists the media types a request body may be labelled with.
var accepted = map[string]bool{
	"application/vnd.msgpack": true,
	"application/msgpack":     true,
	"application/x-msgpack":   true,
}

// IsMsgpack reports whether a Content-Type header names MessagePack (parameters are ignored).
func IsMsgpack(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && accepted[mt]
}

// Write encodes v and sends it with the given status code as application/vnd.msgpack. The body
// is encoded before anything is sent, so an encoding error can still become a 500.
func Write(w http.ResponseWriter, status int, v any) error {
	b, err := mpk.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

// ErrUnsupportedMediaType is returned by Read for a body that is not labelled as MessagePack;
// answer it with 415 Unsupported Media Type.
var ErrUnsupportedMediaType = errors.New("mpkhttp: request body is not application/vnd.msgpack, application/msgpack or application/x-msgpack")

// ErrBodyTooLarge is returned by Read for a body over its maxBytes; answer it with 413.
var ErrBodyTooLarge = errors.New("mpkhttp: request body too large")

// Read decodes the request body, which must be one MessagePack value of at most maxBytes bytes,
// into v. It returns ErrUnsupportedMediaType, ErrBodyTooLarge, or the decoding error
// (*mpk.DecodeError, *mpk.UnmarshalTypeError, ...), which deserves a 400.
func Read(r *http.Request, v any, maxBytes int64) error {
	if !IsMsgpack(r.Header.Get("Content-Type")) {
		return ErrUnsupportedMediaType
	}
	// One byte more than maxBytes tells a body over the limit from one at it; the limit
	// saturates at math.MaxInt64 instead of overflowing into a negative one.
	limit := maxBytes
	if limit < math.MaxInt64 {
		limit++
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit))
	if err != nil {
		return err
	}
	if int64(len(body)) > maxBytes {
		return ErrBodyTooLarge
	}
	return mpk.Unmarshal(body, v)
}

// Status maps an error from Read to the HTTP status to answer with.
func Status(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrUnsupportedMediaType):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
