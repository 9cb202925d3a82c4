package bedrock

import (
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
)

// testNew builds providers the way the local server does, over the SDK's full chain.
var testNew = Factory(sdkconfig.Load)

func typesStopReason(s string) types.StopReason { return types.StopReason(s) }
