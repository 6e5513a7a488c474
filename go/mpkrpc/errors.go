package mpkrpc

import (
	"errors"
	"fmt"

	"mpk.dev/go/mpk"
)

// CallError is a call answered with an error: Value is the error value of the response decoded
// as the endpoint decodes results into an `any` (any MessagePack value), Raw its bytes.
type CallError struct {
	Method string
	MsgID  uint32
	Value  any
	Raw    mpk.RawMessage
}

func (e *CallError) Error() string {
	return fmt.Sprintf("mpkrpc: %s (msgid %d) failed: %s", e.Method, e.MsgID, ErrorMessage(e.Value))
}

// Message is ErrorMessage(e.Value).
func (e *CallError) Message() string { return ErrorMessage(e.Value) }

// Neovim reads Neovim's error shape [type, message] (type 0 is Exception, 1 Validation).
func (e *CallError) Neovim() (typ int64, msg string, ok bool) { return NeovimError(e.Value) }

// CodeMessage reads the {code, message} shape (a map with an int "code" and a string "message").
func (e *CallError) CodeMessage() (code int64, msg string, ok bool) { return CodeMessageError(e.Value) }

// Neovim's error types.
const (
	NeovimException  = 0
	NeovimValidation = 1
)

// ErrorMessage gives the text of an error value in the common shapes: a string (or bin), Neovim's
// [type, message], a map with "message" (or "msg", or "error"); anything else is formatted with %v.
func ErrorMessage(v any) string {
	if s, ok := text(v); ok {
		return s
	}
	if _, msg, ok := NeovimError(v); ok {
		return msg
	}
	if _, msg, ok := CodeMessageError(v); ok {
		return msg
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"message", "msg", "error"} {
			if s, ok := text(m[k]); ok {
				return s
			}
		}
	}
	return fmt.Sprintf("%v", v)
}

// NeovimError reads Neovim's [type, message] error shape.
func NeovimError(v any) (typ int64, msg string, ok bool) {
	a, isArr := v.([]any)
	if !isArr || len(a) != 2 {
		return 0, "", false
	}
	t, okT := integer(a[0])
	m, okM := text(a[1])
	return t, m, okT && okM
}

// CodeMessageError reads the {code, message} error shape (JSON-RPC's).
func CodeMessageError(v any) (code int64, msg string, ok bool) {
	var c, m any
	switch x := v.(type) {
	case map[string]any:
		c, m = x["code"], x["message"]
	case map[any]any:
		c, m = x["code"], x["message"]
	default:
		return 0, "", false
	}
	code, okC := integer(c)
	msg, okM := text(m)
	return code, msg, okC && okM
}

func text(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		return int64(x), x <= 1<<63-1
	}
	return 0, false
}

// ConnError is the error of every call pending when the connection ended, and of calls made after:
// Cause is io.EOF (the peer closed), a read error (a reset), a *mpk.DecodeError (the peer sent bytes
// that are not MessagePack, or over the endpoint's limits; Truncated when the connection ended
// inside a message) or ErrClosed (Close was called).
//
// Peer is the message of the last msgid-0 error response the peer sent, if any: how a peer
// (mpkrpc, Neovim) says what it found wrong with our messages before it closes the connection.
type ConnError struct {
	Cause error
	Peer  string
}

func (e *ConnError) Error() string {
	s := "mpkrpc: connection ended: " + e.Cause.Error()
	if e.Peer != "" {
		s += " (the peer's last msgid-0 error: " + e.Peer + ")"
	}
	return s
}
func (e *ConnError) Unwrap() error { return e.Cause }

// ErrClosed is the cause of a ConnError after Close.
var ErrClosed = errors.New("endpoint closed")

// ProtocolError describes a well-formed MessagePack value that is not a valid MessagePack-RPC
// message, or a response nobody waits for. It is passed to Options.OnProtocolError.
type ProtocolError struct {
	Offset int64  // stream offset of the message
	Reason string // what is wrong
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("mpkrpc: protocol violation at offset %d: %s", e.Offset, e.Reason)
}

// Error returns an error whose value, returned by a handler, is sent as the response's error as it
// is (any value Marshal encodes). Other errors a handler returns are sent as Neovim's
// [0, err.Error()] (Exception).
func Error(value any) error { return &valueError{value} }

type valueError struct{ v any }

func (e *valueError) Error() string { return "mpkrpc: error value " + ErrorMessage(e.v) }
