//go:build deps

// Package deps pins modules that packages under construction will import.
package deps

import (
	_ "cloud.google.com/go/aiplatform/apiv1"
	_ "cloud.google.com/go/firestore"
	_ "cloud.google.com/go/secretmanager/apiv1"
	_ "github.com/GoogleCloudPlatform/functions-framework-go/functions"
	_ "github.com/aws/aws-lambda-go/lambdaurl"
	_ "github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	_ "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	_ "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	_ "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	_ "github.com/awslabs/goformation/v7"
	_ "github.com/cloudevents/sdk-go/v2/event"
	_ "github.com/hashicorp/hcl/v2/hclparse"
	_ "github.com/openai/openai-go/v3"
	_ "golang.org/x/oauth2/google"
	_ "google.golang.org/grpc"
)
