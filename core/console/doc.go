// Package console is the web console at /console, served by the control-plane function.
package console
