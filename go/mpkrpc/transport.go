package mpkrpc

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
)

// Dial connects to a MessagePack-RPC peer: network is "tcp", "tcp4", "tcp6" or "unix" (as for
// net.Dialer), and ctx bounds only the connecting.
func Dial(ctx context.Context, network, addr string, opts *Options) (*Endpoint, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return New(c, opts), nil
}

// Server serves MessagePack-RPC on every connection a listener accepts: each connection is an
// Endpoint sharing Options (and so Options.Handlers; a nil Handlers gets a set shared by all
// connections). Handlers can call back into their client with FromContext(ctx).
type Server struct {
	Options Options
	// OnConnect, if set, is called with each new endpoint (before its first message is read
	// only if the handlers are registered beforehand).
	OnConnect func(*Endpoint)

	mu    sync.Mutex
	eps   map[*Endpoint]struct{}
	ls    map[net.Listener]struct{}
	close bool
}

// Listen is net.Listen followed by Serve in a new goroutine. It returns the listener (Addr
// gives the port of "127.0.0.1:0"); Close on the server stops it.
func (s *Server) Listen(network, addr string) (net.Listener, error) {
	l, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	go func() { _ = s.Serve(l) }()
	return l, nil
}

// Register registers a handler in the server's handler set.
func (s *Server) Register(name string, fn any) { s.handlers().Register(name, fn) }

func (s *Server) handlers() *Handlers {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Options.Handlers == nil {
		s.Options.Handlers = &Handlers{}
	}
	return s.Options.Handlers
}

// Serve accepts connections on l until it fails or the server is closed, serving each.
func (s *Server) Serve(l net.Listener) error {
	s.handlers()
	s.mu.Lock()
	if s.close {
		s.mu.Unlock()
		l.Close()
		return net.ErrClosed
	}
	if s.ls == nil {
		s.ls = map[net.Listener]struct{}{}
	}
	s.ls[l] = struct{}{}
	s.mu.Unlock()
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			delete(s.ls, l)
			closed := s.close
			s.mu.Unlock()
			if closed {
				return net.ErrClosed
			}
			return err
		}
		s.ServeConn(c)
	}
}

// ServeConn serves one connection and returns its endpoint.
func (s *Server) ServeConn(c io.ReadWriteCloser) *Endpoint {
	s.handlers()
	s.mu.Lock()
	opts := s.Options
	s.mu.Unlock()
	ep := New(c, &opts)
	s.mu.Lock()
	if s.eps == nil {
		s.eps = map[*Endpoint]struct{}{}
	}
	s.eps[ep] = struct{}{}
	closed := s.close
	s.mu.Unlock()
	if closed {
		ep.Close()
	}
	go func() {
		<-ep.Done()
		s.mu.Lock()
		delete(s.eps, ep)
		s.mu.Unlock()
	}()
	if s.OnConnect != nil {
		s.OnConnect(ep)
	}
	return ep
}

// Close closes the listeners and every connection (see Endpoint.Close) and waits for their
// goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.close = true
	var errs []error
	for l := range s.ls {
		errs = append(errs, l.Close())
	}
	eps := make([]*Endpoint, 0, len(s.eps))
	for ep := range s.eps {
		eps = append(eps, ep)
	}
	s.mu.Unlock()
	for _, ep := range eps {
		ep.Close()
		ep.Wait()
	}
	return errors.Join(errs...)
}

// Stdio is an endpoint on the process's standard input and output (as Neovim's remote plugins
// and `nvim --embed`'s parent use them). Close closes both, but cannot interrupt a read blocked
// on a terminal or a blocking stdin: the reader returns at the next input or at EOF.
func Stdio(opts *Options) *Endpoint {
	return New(pipeRWC{os.Stdin, os.Stdout}, opts)
}

// pipeRWC joins a reader and a writer into one stream; Close closes both.
type pipeRWC struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeRWC) Close() error {
	return errors.Join(p.w.Close(), p.ReadCloser.Close())
}

// Spawn starts cmd and speaks MessagePack-RPC on its standard input and output (cmd.Stdin and
// cmd.Stdout must be unset; cmd.Stderr is left as the caller set it). Closing the endpoint closes
// the child's stdin and stdout pipes; the returned wait function waits for the child to exit
// (call it after Close, or after the child ended the connection) and gives cmd.Wait's error.
func Spawn(cmd *exec.Cmd, opts *Options) (ep *Endpoint, wait func() error, err error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	ep = New(pipeRWC{out, in}, opts)
	var once sync.Once
	var werr error
	wait = func() error {
		once.Do(func() {
			<-ep.Done()
			ep.wg.Wait() // the reader is done with the stdout pipe before cmd.Wait closes it
			werr = cmd.Wait()
		})
		return werr
	}
	return ep, wait, nil
}
