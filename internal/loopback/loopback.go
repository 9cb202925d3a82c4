// Package loopback hands out loopback TCP ports for child processes (an emulator, the local
// server, aws-lambda-rie) to listen on, and keeps each one reserved until it is released.
//
// Asking the kernel for a free port and closing the listener before the child binds leaves a
// window in which the same port is handed to someone else: a second call of the same helper
// (TestRIESmoke once gave aws-lambda-rie one port for both its listeners) or another process
// on the machine. On Linux a reservation is a socket bound to the port with SO_REUSEADDR but
// never listening: the kernel hands the port to nobody else while it is held, and a child that
// sets SO_REUSEADDR too (Go's net.Listen, Python's http.server and the JVM all do) can still
// bind and listen on it. Elsewhere the port is only probed, as before.
//
// Blackhole (blackhole.go) is a loopback listener that never answers, for the tests of a
// client's timeouts.
package loopback

import (
	"fmt"
	"net"
	"strconv"
)

// Port is a reserved loopback port.
type Port struct {
	num     int
	release func() error
}

// Reserve reserves a free port on 127.0.0.1 until Release.
func Reserve() (*Port, error) {
	num, release, err := reserve()
	if err != nil {
		return nil, fmt.Errorf("reserving a loopback port: %w", err)
	}
	return &Port{num: num, release: release}, nil
}

// Number is the port number.
func (p *Port) Number() int { return p.num }

// String is the port number in decimal, as a PORT variable wants it.
func (p *Port) String() string { return strconv.Itoa(p.num) }

// Addr is 127.0.0.1:port.
func (p *Port) Addr() string { return net.JoinHostPort("127.0.0.1", p.String()) }

// Release ends the reservation; a child already listening keeps the port. Safe to call more
// than once.
func (p *Port) Release() {
	if p.release != nil {
		_ = p.release()
		p.release = nil
	}
}

// TB is the part of testing.TB that ForTest needs.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// ForTest reserves a port for the rest of the test.
func ForTest(t TB) *Port {
	t.Helper()
	p, err := Reserve()
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(p.Release)
	return p
}
