package bedrock

import (
	"errors"
	"strconv"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/providers"
)

// answerLimit bounds a non-streamed answer (Converse, InvokeModel, CountTokens), which the SDK
// reads whole into memory with no limit of its own: providers.MaxAnswer, which tests lower.
// Streams are bounded per event by the event-stream decoder (16 MB) and the SSE reader, and
// in time by the gateway's timeouts.
var answerLimit int64 = providers.MaxAnswer

// errAnswerTooLarge is what a read past providers.MaxAnswer fails with.
var errAnswerTooLarge = errors.New("the answer is larger than " + strconv.Itoa(providers.MaxAnswer>>20) + " MB")

// limitAnswers caps the answers of the non-streaming operations, which the SDK reads whole.
var limitAnswers = awsconf.LimitAnswers("fngate.AnswerLimit", &answerLimit, errAnswerTooLarge, "Converse", "InvokeModel", "CountTokens")
