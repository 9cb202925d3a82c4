// Package crossroute holds only tests: one gateway model routed over Anthropic, Claude on
// Bedrock and Claude on Vertex AI, each backend a fake that speaks its real wire, driven by
// the official SDKs through the Messages door (anthropic-sdk-go) and the Responses door
// (openai-go). It shows what no provider's own tests can: failover across backends before
// any output, none after, and usage and cost as each backend reports them.
package crossroute
