package remediation

// The subscriptions to provider health news the templates create; infra tests keep the
// templates equal to these, and the handlers' tests decode events that match them.
const (
	// AWSHealthRulePattern is the EventBridge rule, on the account's default bus in the
	// deployment's region, that sends AWS Health issues for Bedrock to the remediation
	// function. Scheduled changes and account notifications are no incidents.
	AWSHealthRulePattern = `{"source":["aws.health"],"detail-type":["AWS Health Event"],` +
		`"detail":{"service":["BEDROCK"],"eventTypeCategory":["issue"]}}`

	// ServiceHealthLogFilter selects, after a project's logName clause, the Personalized
	// Service Health entries about Vertex AI incidents; a log sink with it publishes them to
	// the remediation topic. impactedProducts is one string, so ":" (has) matches a product
	// name within it.
	ServiceHealthLogFilter = `jsonPayload.category="INCIDENT" AND jsonPayload.impactedProducts:"Vertex"`
	// ServiceHealthLog is the log Service Health writes to in each project, URL-escaped as a
	// logName has it: projects/<project>/logs/ + ServiceHealthLog.
	ServiceHealthLog = "servicehealth.googleapis.com%2Factivity"
)
