package loopback

import (
	"errors"
	"net"
	"runtime"
	"syscall"
	"testing"
)

// While ports are reserved, the kernel hands none of them to anyone else: not to another
// reservation, not to a port-0 listener. Probing and closing, the old way, let ports come
// back (two calls gave aws-lambda-rie one port for both its listeners).
func TestReservedPortsAreNotHandedOutAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reservations hold ports on Linux only")
	}
	held := map[int]bool{}
	for range 200 {
		p := ForTest(t)
		if held[p.Number()] {
			t.Fatalf("port %d reserved twice", p.Number())
		}
		held[p.Number()] = true
	}
	for range 5000 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if held[port] {
			t.Fatalf("a port-0 listener got reserved port %d", port)
		}
	}
}

// The child the port is for can listen on it while it is held, on 127.0.0.1 or on every
// interface (the functions framework listens on :PORT); until it does, connections are
// refused, so a dead upstream can be a reserved port.
func TestChildListensOnReservedPort(t *testing.T) {
	for _, host := range []string{"127.0.0.1", ""} {
		p := ForTest(t)
		if _, err := net.Dial("tcp", p.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial before the child listens: %v, want connection refused", err)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, p.String()))
		if err != nil {
			t.Fatalf("the child cannot listen on its reserved port: %v", err)
		}
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatalf("dial after the child listens: %v", err)
		}
		c.Close()
		p.Release()
		p.Release() // idempotent
		ln.Close()
	}
}
