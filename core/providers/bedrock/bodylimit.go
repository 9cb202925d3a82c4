package bedrock

import (
	"context"
	"errors"
	"io"
	"strconv"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fngate/fngate/core/providers"
)

// answerLimit bounds a non-streamed answer (Converse, InvokeModel, CountTokens), which the SDK
// reads whole into memory with no limit of its own: providers.MaxAnswer, which tests lower.
// Streams are bounded per event by the event-stream decoder (16 MB) and the SSE reader, and
// in time by the gateway's timeouts.
var answerLimit int64 = providers.MaxAnswer

// errAnswerTooLarge is what a read past providers.MaxAnswer fails with.
var errAnswerTooLarge = errors.New("the answer is larger than " + strconv.Itoa(providers.MaxAnswer>>20) + " MB")

// limitAnswers is an SDK API option: it caps the response body of the non-streaming
// operations before their deserializers read it. Added last to the deserialize step, it runs
// closest to the transport, so it sees the body first.
func limitAnswers(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("fngate.AnswerLimit",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.Body != nil {
				switch awsmiddleware.GetOperationName(ctx) {
				case "Converse", "InvokeModel", "CountTokens":
					resp.Body = &limitedBody{ReadCloser: resp.Body, left: answerLimit}
				}
			}
			return out, md, err
		}), middleware.After)
}

// limitedBody fails a read past left bytes, rather than ending the body early as
// io.LimitReader would: a cut answer must not pass for a whole one.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Anything beyond the limit, even one byte, fails the answer.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, errAnswerTooLarge
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
