// Package filelock takes the exclusive advisory lock under which the file stores (route
// state, counters) let processes on one machine share one JSON file.
package filelock
