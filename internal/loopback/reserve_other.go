//go:build !linux

package loopback

import "net"

// reserve probes a free port and lets it go at once: BSD and Windows semantics give a holder
// no way to keep others off a port while letting the child bind it, so off Linux two
// reservations can still meet (rarely).
func reserve() (int, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	num := ln.Addr().(*net.TCPAddr).Port
	return num, func() error { return nil }, ln.Close()
}
