package bedrock

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/internal/bedrockfake"
)

// testNew builds providers the way the local server does, over the SDK's full chain.
var testNew = Factory(sdkconfig.Load)

// IsolateAWS gives a test static credentials and hides the rest of the SDK's default chain
// (bedrockfake.IsolateAWS).
func IsolateAWS(t testing.TB, accessKeyID string) { bedrockfake.IsolateAWS(t, accessKeyID) }

func typesStopReason(s string) types.StopReason { return types.StopReason(s) }
