package awsconf

import (
	"context"
	"io"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// LimitAnswers is an SDK API option capping the response bodies of operations (all of a
// client's, when none are named) at *limit bytes, before their deserializers read them: the
// SDK reads a non-streamed answer whole into memory with no bound of its own, and an upstream
// is untrusted input. Added last to the deserialize step, it runs closest to the transport,
// so it sees the body first. A read past the limit fails with tooLarge, rather than ending
// early as io.LimitReader would: a cut answer must not pass for a whole one. limit is read
// per call, so tests can lower it.
func LimitAnswers(name string, limit *int64, tooLarge error, operations ...string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc(name,
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.Body != nil && limited(ctx, operations) {
					resp.Body = LimitBody(resp.Body, *limit, tooLarge)
				}
				return out, md, err
			}), middleware.After)
	}
}

func limited(ctx context.Context, operations []string) bool {
	if len(operations) == 0 {
		return true
	}
	op := awsmiddleware.GetOperationName(ctx)
	for _, o := range operations {
		if o == op {
			return true
		}
	}
	return false
}

// LimitBody is body failing with tooLarge at a read past limit bytes.
func LimitBody(body io.ReadCloser, limit int64, tooLarge error) io.ReadCloser {
	return &limitedBody{ReadCloser: body, left: limit, tooLarge: tooLarge}
}

type limitedBody struct {
	io.ReadCloser
	left     int64
	tooLarge error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Anything beyond the limit, even one byte, fails the answer.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, b.tooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
