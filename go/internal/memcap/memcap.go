// Package memcap caps the address space of the calling process, for tests that run hostile
// inputs in a child process and check that it ends with the documented error instead of growing.
package memcap

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// CapAddressSpace limits the process's address space to what it uses now plus extra bytes
// (Linux: the VmSize of /proc/self/status, then RLIMIT_AS).
func CapAddressSpace(extra uint64) error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmSize:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return err
			}
			lim := kb*1024 + extra
			return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim})
		}
	}
	return errors.New("no VmSize in /proc/self/status")
}
