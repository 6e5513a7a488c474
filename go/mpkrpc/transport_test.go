package mpkrpc

import (
	"os"
	"os/exec"
	"testing"
)

// TestStdioChild is the child of TestSpawnStdio: an endpoint on its own stdin and stdout.
func TestStdioChild(t *testing.T) {
	if os.Getenv("MPKRPC_STDIO_CHILD") == "" {
		t.Skip("run by TestSpawnStdio")
	}
	ep := Stdio(nil)
	ep.Register("add", func(a, b int) int { return a + b })
	ep.Register("pid", func() int { return os.Getpid() })
	<-ep.Done() // until the parent closes our stdin
	ep.Wait()
}

// A child process speaking on its stdio (Stdio), driven through Spawn.
func TestSpawnStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStdioChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MPKRPC_STDIO_CHILD=1")
	ep, wait, err := Spawn(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if v, err := ep.Call(ctx, "add", 20, 22); err != nil || v != int64(42) {
		t.Fatalf("add = %v, %v", v, err)
	}
	var pid int
	if err := ep.CallInto(ctx, &pid, "pid"); err != nil || pid != cmd.Process.Pid {
		t.Fatalf("pid = %d, %v; child is %d", pid, err, cmd.Process.Pid)
	}
	ep.Close()
	if err := wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
}
