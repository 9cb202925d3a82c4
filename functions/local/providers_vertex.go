//go:build !novertex

package main

import "github.com/fngate/fngate/core/providers/vertex"

func init() { registerVertex = vertex.Register }
