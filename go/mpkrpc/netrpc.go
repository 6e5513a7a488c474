package mpkrpc

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/rpc"
	"sync"

	"mpk.dev/go/mpk"
)

// NewClientCodec returns a net/rpc ClientCodec speaking MessagePack-RPC on conn: a call of
// "Service.Method" with args is the request [0, msgid, "Service.Method", [args]], and the
// response's result is decoded into the reply. An error value becomes the rpc.ServerError of its
// ErrorMessage. Notifications from the peer are skipped. Switch a net/rpc client with
//
//	client := rpc.NewClientWithCodec(mpkrpc.NewClientCodec(conn))
func NewClientCodec(conn io.ReadWriteCloser) rpc.ClientCodec {
	return &clientCodec{codec: newCodec(conn), seqs: map[uint32]uint64{}}
}

// NewServerCodec returns a net/rpc ServerCodec speaking MessagePack-RPC on conn: a request's
// params must hold exactly one argument (net/rpc's args), and the reply travels as the result.
// Notifications are served like requests whose response is dropped. Switch a net/rpc server with
//
//	go server.ServeCodec(mpkrpc.NewServerCodec(conn))
func NewServerCodec(conn io.ReadWriteCloser) rpc.ServerCodec {
	return &serverCodec{codec: newCodec(conn), ids: map[uint64]serverReq{}}
}

type codec struct {
	conn io.ReadWriteCloser
	dec  *mpk.Decoder
	lim  mpk.Limits
	wmu  sync.Mutex
	body []byte // the value of the current message to decode
}

func newCodec(conn io.ReadWriteCloser) *codec {
	c := &codec{conn: conn, dec: mpk.NewDecoder(conn), lim: DefaultLimits()}
	c.dec.SetOptions(mpk.DecodeOptions{Limits: &c.lim})
	return c
}

func (c *codec) read() (message, error) {
	var raw mpk.RawMessage
	if err := c.dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return message{}, io.EOF
		}
		return message{}, err
	}
	m, reason := parse(raw)
	if reason != "" {
		return m, fmt.Errorf("mpkrpc: invalid message: %s", reason)
	}
	return m, nil
}

func (c *codec) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.conn.Write(b)
	return err
}

func (c *codec) decodeBody(v any) error {
	b := c.body
	c.body = nil
	if v == nil || b == nil {
		return nil
	}
	return mpk.DecodeOptions{Limits: &c.lim}.Unmarshal(b, v)
}

type clientCodec struct {
	*codec
	mu   sync.Mutex
	seqs map[uint32]uint64
}

func (c *clientCodec) WriteRequest(r *rpc.Request, body any) error {
	id := uint32(r.Seq % math.MaxUint32)
	b := mpk.AppendArrayHeader(nil, 4)
	b = mpk.AppendInt(b, typeRequest)
	b = mpk.AppendUint(b, uint64(id))
	b = mpk.AppendString(b, r.ServiceMethod)
	b = mpk.AppendArrayHeader(b, 1)
	b, err := mpk.MarshalAppend(b, body)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.seqs[id] = r.Seq
	c.mu.Unlock()
	return c.write(b)
}

func (c *clientCodec) ReadResponseHeader(r *rpc.Response) error {
	for {
		m, err := c.read()
		if err != nil {
			return err
		}
		if m.kind != typeResponse {
			continue // net/rpc clients serve nothing
		}
		c.mu.Lock()
		seq, ok := c.seqs[m.msgid]
		delete(c.seqs, m.msgid)
		c.mu.Unlock()
		if !ok {
			return fmt.Errorf("mpkrpc: response for msgid %d, which no call waits for", m.msgid)
		}
		r.Seq, r.Error, c.body = seq, "", m.result
		if len(m.errv) != 1 || m.errv[0] != 0xc0 {
			r.Error = describe(m.errv)
			c.body = nil
		}
		return nil
	}
}

func (c *clientCodec) ReadResponseBody(body any) error { return c.decodeBody(body) }
func (c *clientCodec) Close() error                    { return c.conn.Close() }

type serverReq struct {
	msgid  uint32
	notify bool
}

type serverCodec struct {
	*codec
	bodyErr error
	mu      sync.Mutex
	seq     uint64
	ids     map[uint64]serverReq
}

func (c *serverCodec) ReadRequestHeader(r *rpc.Request) error {
	m, err := c.read()
	if err != nil {
		return err
	}
	if m.kind == typeResponse {
		return fmt.Errorf("mpkrpc: a net/rpc server got a response (msgid %d)", m.msgid)
	}
	c.mu.Lock()
	c.seq++
	r.Seq, r.ServiceMethod = c.seq, m.method
	c.ids[c.seq] = serverReq{msgid: m.msgid, notify: m.kind == typeNotification}
	c.mu.Unlock()
	n, rest, _ := mpk.ReadArrayHeader(m.params)
	c.body, c.bodyErr = rest, nil
	if n != 1 {
		// Reported by ReadRequestBody: net/rpc answers a body error and goes on, while a header
		// error ends the connection.
		c.body, c.bodyErr = nil, fmt.Errorf("mpkrpc: %s: net/rpc takes exactly one argument, got %d", m.method, n)
	}
	return nil
}

func (c *serverCodec) ReadRequestBody(body any) error {
	if err := c.bodyErr; err != nil {
		c.bodyErr = nil
		if body != nil {
			return err
		}
	}
	return c.decodeBody(body)
}

func (c *serverCodec) WriteResponse(r *rpc.Response, body any) error {
	c.mu.Lock()
	req, ok := c.ids[r.Seq]
	delete(c.ids, r.Seq)
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("mpkrpc: response for unknown sequence %d", r.Seq)
	}
	if req.notify {
		return nil
	}
	b := mpk.AppendArrayHeader(nil, 4)
	b = mpk.AppendInt(b, typeResponse)
	b = mpk.AppendUint(b, uint64(req.msgid))
	if r.Error != "" {
		b = mpk.AppendString(b, r.Error)
		b = mpk.AppendNil(b)
	} else {
		b = mpk.AppendNil(b)
		var err error
		if b, err = mpk.MarshalAppend(b, body); err != nil {
			return err
		}
	}
	return c.write(b)
}

func (c *serverCodec) Close() error { return c.conn.Close() }
