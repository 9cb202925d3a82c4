// Package cost is the gateway's cost model: dollars per million requests for request
// profiles a user recognises, on Lambda per memory size and on Cloud Functions gen2 per
// vCPU, memory and concurrency, with the store operations each request adds, beside an
// always-on pair of Fargate tasks behind a load balancer and the volume where the two break
// even. docs/cost.md explains the model and shows its table for the default inputs.
//
//	prices.go    the published prices, each named with its unit, region, date and source
//	measured.go  the benchmark's figures per function size (defaults from BENCHMARKS.md)
//	model.go     the arithmetic: per request, per month, break-even
//	report.go    the tables `fngate cost` prints
package cost

// Checked is the day the prices below were looked up.
const Checked = "2026-12-03"

// Prices: USD, on-demand, no free tier (a gateway worth modelling is past it), first pricing
// tier. Every value is also in PriceTable with its unit, region and source page.
const (
	// Lambda, us-east-1, arm64.
	LambdaArmGBSecond     = 0.0000133334 // per GB-second, first 7.5 billion GB-s a month
	LambdaRequest         = 0.20 / 1e6   // per request (invocation)
	LambdaStreamedGB      = 0.008        // per GB streamed beyond the first 6 MB of a response
	LambdaStreamFreeBytes = 6 << 20      // per response, not billed as streamed bytes

	// Cloud Run (Cloud Functions gen2 is billed as Cloud Run), us-central1 (Tier 1),
	// request-based billing ("CPU only allocated during request processing").
	CloudRunVCPUSecond = 0.000024   // per vCPU-second
	CloudRunGiBSecond  = 0.0000025  // per GiB-second
	CloudRunRequest    = 0.40 / 1e6 // per request

	// DynamoDB on-demand, us-east-1, Standard table class.
	DynamoDBWriteRequestUnit = 0.625 / 1e6 // per write request unit (1 KB written)
	DynamoDBReadRequestUnit  = 0.125 / 1e6 // per read request unit (4 KB strongly consistent, 2 x 4 KB eventually)

	// Firestore Standard edition, us-central1 (regional; the nam5 multi-region is twice).
	FirestoreDocRead  = 0.03 / 1e5 // per document read
	FirestoreDocWrite = 0.09 / 1e5 // per document write

	// Fargate, us-east-1, Linux/ARM (the gateway's binaries are built for arm64 already).
	FargateARMVCPUHour = 0.03238 // per vCPU-hour
	FargateARMGBHour   = 0.00356 // per GB-hour

	// Application Load Balancer, us-east-1.
	ALBHour    = 0.0225 // per load balancer-hour
	ALBLCUHour = 0.008  // per LCU-hour: the largest of 25 new connections/s, 3,000 active connections/min, 1 GB processed/hour, 1,000 rule evaluations/s

	// CloudWatch Logs, us-east-1, Standard log class; Cloud Logging past its free 50 GiB a
	// project a month. The gateway's request and attempt lines are billed here.
	CloudWatchLogsIngestGB = 0.50 // per GB ingested
	CloudLoggingGiB        = 0.50 // per GiB ingested

	HoursPerMonth = 730 // AWS's and Google's pricing calculators' month
)

// Price is one row of PriceTable: a constant above and where it comes from.
type Price struct {
	Name   string  // the constant's name
	Value  float64 // USD per Unit
	Unit   string
	Region string
	Source string // the page the figure is published on
	// Checked says how the figure was confirmed on Checked: the provider's page itself, or
	// only a copy or a third party's restatement of it, or not at all.
	Checked string
}

const (
	lambdaPage    = "https://aws.amazon.com/lambda/pricing/"
	cloudRunPage  = "https://cloud.google.com/run/pricing"
	dynamoPage    = "https://aws.amazon.com/dynamodb/pricing/on-demand/"
	firestorePage = "https://cloud.google.com/firestore/pricing"
	fargatePage   = "https://aws.amazon.com/fargate/pricing/"
	elbPage       = "https://aws.amazon.com/elasticloadbalancing/pricing/"
	cwPage        = "https://aws.amazon.com/cloudwatch/pricing/"
	loggingPage   = "https://cloud.google.com/stackdriver/pricing"
)

// PriceTable lists every price the model uses, for docs/cost.md and `fngate cost -prices`.
var PriceTable = []Price{
	{"LambdaArmGBSecond", LambdaArmGBSecond, "USD per GB-second (first 7.5 billion GB-s/month)", "us-east-1", lambdaPage, "third party's restatement of the page (cloudchipr.com, 2024); the stored copy of the AWS page did not carry the table"},
	{"LambdaRequest", LambdaRequest, "USD per request ($0.20 per million)", "us-east-1", lambdaPage, "not confirmed on " + Checked + ": no stored copy carried it; the figure AWS has published since 2014"},
	{"LambdaStreamedGB", LambdaStreamedGB, "USD per GB streamed beyond 6 MB of a response", "us-east-1", lambdaPage, "not confirmed on " + Checked + ": a third party (cloudchipr.com) confirms the first 6 MB of each response are free, not the rate"},
	{"CloudRunVCPUSecond", CloudRunVCPUSecond, "USD per vCPU-second, request-based billing", "us-central1 (Tier 1)", cloudRunPage, "the page (stored copy): $0.00002400 / vCPU-second beyond free tier"},
	{"CloudRunGiBSecond", CloudRunGiBSecond, "USD per GiB-second, request-based billing", "us-central1 (Tier 1)", cloudRunPage, "third parties' restatement (cloudwebschool.com, cloudchipr.com 2025); the stored copy of the page was cut before it"},
	{"CloudRunRequest", CloudRunRequest, "USD per request ($0.40 per million)", "us-central1 (Tier 1)", cloudRunPage, "third parties' restatement (cloudwebschool.com, cloudchipr.com 2025)"},
	{"DynamoDBWriteRequestUnit", DynamoDBWriteRequestUnit, "USD per write request unit ($0.625 per million)", "us-east-1", dynamoPage, "third party's restatement (airbyte.com), the price since the cut of 2024-11-01"},
	{"DynamoDBReadRequestUnit", DynamoDBReadRequestUnit, "USD per read request unit ($0.125 per million)", "us-east-1", dynamoPage, "third party's restatement (airbyte.com), the price since the cut of 2024-11-01"},
	{"FirestoreDocRead", FirestoreDocRead, "USD per document read ($0.03 per 100,000)", "us-central1", firestorePage, "third party's restatement (airbyte.com, \"US regions\"); the stored copy of the page renders its table by script"},
	{"FirestoreDocWrite", FirestoreDocWrite, "USD per document write ($0.09 per 100,000)", "us-central1", firestorePage, "third party's restatement (airbyte.com, \"US regions\"); multi-region nam5 is $0.06 / $0.18 per 100,000"},
	{"FargateARMVCPUHour", FargateARMVCPUHour, "USD per vCPU-hour, Linux/ARM", "us-east-1", fargatePage, "third party's restatement (vantage.sh); Linux/x86 is $0.04048"},
	{"FargateARMGBHour", FargateARMGBHour, "USD per GB-hour, Linux/ARM", "us-east-1", fargatePage, "third party's restatement (vantage.sh); Linux/x86 is $0.004445"},
	{"ALBHour", ALBHour, "USD per Application Load Balancer-hour", "us-east-1", elbPage, "third party's restatement (cloud-horizons.com, 2026-05)"},
	{"ALBLCUHour", ALBLCUHour, "USD per LCU-hour", "us-east-1", elbPage, "third party's restatement (cloud-horizons.com, 2026-05)"},
	{"CloudWatchLogsIngestGB", CloudWatchLogsIngestGB, "USD per GB ingested, Standard class", "us-east-1", cwPage, "third parties' restatement (c3x.dev, hykell.com, 2026)"},
	{"CloudLoggingGiB", CloudLoggingGiB, "USD per GiB ingested past 50 GiB/project/month", "global", loggingPage, "not confirmed on " + Checked + ": the figure Google has published since 2022"},
}

// Prices are the rates the arithmetic takes, so a test can pin its own and a price change is
// one edit of the constants above.
type Prices struct {
	LambdaGBSecond, LambdaRequest, LambdaStreamedGB float64
	LambdaStreamFreeBytes                           float64
	RunVCPUSecond, RunGiBSecond, RunRequest         float64
	DynamoWRU, DynamoRRU                            float64
	FirestoreRead, FirestoreWrite                   float64
	FargateVCPUHour, FargateGBHour                  float64
	ALBHour, ALBLCUHour                             float64
	LogsIngestGB                                    float64 // the one figure both clouds publish
}

// DefaultPrices are the constants above.
func DefaultPrices() Prices {
	return Prices{
		LambdaGBSecond: LambdaArmGBSecond, LambdaRequest: LambdaRequest, LambdaStreamedGB: LambdaStreamedGB,
		LambdaStreamFreeBytes: LambdaStreamFreeBytes,
		RunVCPUSecond:         CloudRunVCPUSecond, RunGiBSecond: CloudRunGiBSecond, RunRequest: CloudRunRequest,
		DynamoWRU: DynamoDBWriteRequestUnit, DynamoRRU: DynamoDBReadRequestUnit,
		FirestoreRead: FirestoreDocRead, FirestoreWrite: FirestoreDocWrite,
		FargateVCPUHour: FargateARMVCPUHour, FargateGBHour: FargateARMGBHour,
		ALBHour: ALBHour, ALBLCUHour: ALBLCUHour,
		LogsIngestGB: CloudWatchLogsIngestGB,
	}
}
