package mpkrpc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests need Debian's neovim (0.7.2), which `make test-go` installs: without nvim they
// fail, they do not skip.

func spawnNvim(t *testing.T) (*Endpoint, context.Context) {
	t.Helper()
	path, err := exec.LookPath("nvim")
	if err != nil {
		t.Fatalf("nvim not found (make test-go installs Debian's neovim): %v", err)
	}
	cmd := exec.Command(path, "--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n")
	cmd.Stderr = os.Stderr
	ep, wait, err := Spawn(cmd, NeovimOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close()
		if err := wait(); err != nil {
			t.Logf("nvim exited: %v", err)
		}
	})
	return ep, ctxT(t)
}

func TestNeovimClient(t *testing.T) {
	nv, ctx := spawnNvim(t)

	var info []any
	if err := nv.CallInto(ctx, &info, "nvim_get_api_info"); err != nil {
		t.Fatal(err)
	}
	chanID, ok := info[0].(int64)
	meta, ok2 := info[1].(map[string]any)
	if !ok || !ok2 || chanID <= 0 {
		t.Fatalf("api info %T %T", info[0], info[1])
	}
	types := meta["types"].(map[string]any)
	for name, id := range map[string]int64{"Buffer": 0, "Window": 1, "Tabpage": 2} {
		if types[name].(map[string]any)["id"] != id {
			t.Fatalf("%s is ext %v, NeovimExt assumes %d", name, types[name], id)
		}
	}
	if v := meta["version"].(map[string]any); v["major"] != int64(0) || v["minor"].(int64) < 7 {
		t.Fatalf("version %v", v)
	}

	for expr, want := range map[string]any{
		"1 + 2":      int64(3),
		"-5 * 1000":  int64(-5000),
		`"abc"`:      "abc",
		`"\xff"`:     "\xff", // invalid UTF-8, kept
		"['a', 'b']": []any{"a", "b"},
		"0.5":        0.5,
	} {
		v, err := nv.Call(ctx, "nvim_eval", expr)
		if err != nil || fmt.Sprintf("%#v", v) != fmt.Sprintf("%#v", want) {
			t.Fatalf("nvim_eval(%s) = %#v, %v; want %#v", expr, v, err, want)
		}
	}
	var raw []byte
	if err := nv.CallInto(ctx, &raw, "nvim_eval", `"\xff\xfe"`); err != nil || string(raw) != "\xff\xfe" {
		t.Fatalf("nvim_eval into []byte = %q, %v", raw, err)
	}

	var buf Buffer
	if err := nv.CallInto(ctx, &buf, "nvim_get_current_buf"); err != nil || buf <= 0 {
		t.Fatalf("current buffer %v, %v", buf, err)
	}
	if _, err := nv.Call(ctx, "nvim_buf_set_lines", buf, 0, -1, true, []string{"one", "two", "three"}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := nv.CallInto(ctx, &lines, "nvim_buf_get_lines", buf, 1, -1, true); err != nil || strings.Join(lines, ",") != "two,three" {
		t.Fatalf("lines %q, %v", lines, err)
	}
	var wins []Window
	if err := nv.CallInto(ctx, &wins, "nvim_list_wins"); err != nil || len(wins) != 1 {
		t.Fatalf("wins %v, %v", wins, err)
	}
	if wb, err := nv.Call(ctx, "nvim_win_get_buf", wins[0]); err != nil || wb != buf {
		t.Fatalf("window's buffer %#v, %v", wb, err)
	}

	_, err := nv.Call(ctx, "nvim_buf_get_lines", Buffer(9999), 0, -1, true)
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("bad buffer: %v", err)
	}
	if typ, msg, ok := ce.Neovim(); !ok || typ != NeovimValidation || !strings.Contains(msg, "Invalid buffer id: 9999") {
		t.Fatalf("error value %#v", ce.Value)
	}
	_, err = nv.Call(ctx, "nvim_no_such_function")
	if !errors.As(err, &ce) || !strings.Contains(ce.Message(), "Invalid method") {
		t.Fatalf("unknown method: %v", err)
	}
	if typ, _, _ := ce.Neovim(); typ != NeovimException {
		t.Fatalf("unknown method error type %v", ce.Value)
	}

	// Notifications through nvim_subscribe + rpcnotify arrive in order, before the reply to the
	// call that sent them.
	got := make(chan []any, 8)
	nv.Register("mpk_event", func(args ...any) { got <- args })
	if _, err := nv.Call(ctx, "nvim_subscribe", "mpk_event"); err != nil {
		t.Fatal(err)
	}
	if _, err := nv.Call(ctx, "nvim_command", "call rpcnotify(0, 'mpk_event', 1, 'x') | call rpcnotify(0, 'mpk_event', 2, [3]) | call rpcnotify(0, 'mpk_event', 3)"); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`[]interface {}{1, "x"}`, `[]interface {}{2, []interface {}{3}}`, `[]interface {}{3}`} {
		if s := fmt.Sprintf("%#v", <-got); s != want {
			t.Fatalf("notification %d: %s, want %s", i, s, want)
		}
	}

	// Neovim calls into the client while the client's own call is pending.
	nv.Register("mpk_add", func(a, b int) int { return a + b })
	v, err := nv.Call(ctx, "nvim_exec_lua", "return vim.rpcrequest(...) * 10", []any{chanID, "mpk_add", 2, 3})
	if err != nil || v != int64(50) {
		t.Fatalf("nvim_exec_lua with a callback = %v, %v", v, err)
	}
	// A callback that fails becomes an error in Neovim, and so an error of the outer call.
	_, err = nv.Call(ctx, "nvim_exec_lua", "return vim.rpcrequest(...)", []any{chanID, "mpk_nothing"})
	if !errors.As(err, &ce) || !strings.Contains(ce.Message(), "Invalid method: mpk_nothing") {
		t.Fatalf("failing callback: %v", err)
	}
}

// Neovim as the client of an mpkrpc server (sockconnect + rpcrequest), over TCP and a Unix socket.
func TestNeovimAsClient(t *testing.T) {
	t.Run("tcp", func(t *testing.T) { neovimAsClient(t, "tcp", "127.0.0.1:0", "tcp") })
	t.Run("unix", func(t *testing.T) { neovimAsClient(t, "unix", filepath.Join(t.TempDir(), "s.sock"), "pipe") })
}

func neovimAsClient(t *testing.T, network, addr, mode string) {
	path, err := exec.LookPath("nvim")
	if err != nil {
		t.Fatalf("nvim not found (make test-go installs Debian's neovim): %v", err)
	}
	s := Server{Options: *NeovimOptions()}
	s.Register("add", func(a, b int) int { return a + b })
	s.Register("join", func(sep string, parts []string) string { return strings.Join(parts, sep) })
	s.Register("fail", func() error { return errors.New("no luck") })
	notes := make(chan string, 1)
	s.Register("note", func(x string) { notes <- x })
	l, err := s.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := filepath.Join(t.TempDir(), "out")
	script := fmt.Sprintf(`let ch = sockconnect('%s', '%s', {'rpc': v:true})
call rpcnotify(ch, 'note', 'hi')
let r = [rpcrequest(ch, 'add', 2, 3), rpcrequest(ch, 'join', '-', ['a', 'b'])]
try
  call rpcrequest(ch, 'fail')
catch
  call add(r, v:exception)
endtry
call writefile([json_encode(r)], '%s')
qa!`, mode, l.Addr(), out)
	vimrc := filepath.Join(t.TempDir(), "script.vim")
	if err := os.WriteFile(vimrc, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", "source "+vimrc)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("nvim: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(b))
	t.Logf("nvim wrote %s", got)
	if !strings.HasPrefix(got, `[5, "a-b", "`) || !strings.Contains(got, "no luck") {
		t.Fatalf("nvim wrote %s", got)
	}
	if x := <-notes; x != "hi" {
		t.Fatalf("note %q", x)
	}
}

// A client of `nvim --headless --listen SOCKET`, through Dial.
func TestNeovimListen(t *testing.T) {
	path, err := exec.LookPath("nvim")
	if err != nil {
		t.Fatalf("nvim not found (make test-go installs Debian's neovim): %v", err)
	}
	sock := filepath.Join(t.TempDir(), "nvim.sock")
	cmd := exec.Command(path, "--headless", "--listen", sock, "-u", "NONE", "-i", "NONE", "-n")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	ctx := ctxT(t)
	var nv *Endpoint
	for nv == nil {
		// nvim creates the socket once it is up.
		if nv, err = Dial(ctx, "unix", sock, NeovimOptions()); err != nil {
			if ctx.Err() != nil {
				t.Fatalf("nvim never listened on %s: %v", sock, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer nv.Close()
	if v, err := nv.Call(ctx, "nvim_eval", "6 * 7"); err != nil || v != int64(42) {
		t.Fatalf("nvim_eval = %v, %v", v, err)
	}
	// nvim exits on qa!, which ends the connection: the pending call fails with a ConnError, or
	// is answered first.
	_, err = nv.Call(ctx, "nvim_command", "qa!")
	if err != nil && !errors.As(err, new(*ConnError)) {
		t.Fatalf("qa!: %v", err)
	}
	<-nv.Done()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("nvim: %v", err)
	}
}
