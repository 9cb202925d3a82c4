package openai

import (
	"strconv"

	"github.com/fngate/fngate/core/jsonx"
)

// AppendString appends s as a JSON string (see jsonx.AppendString).
func AppendString(b []byte, s string) []byte { return jsonx.AppendString(b, s) }

func quote(s string) string { return string(AppendString(nil, s)) }

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
