package modelarmor

import "encoding/json"

// The answer of sanitizeUserPrompt and sanitizeModelResponse, as far as a verdict needs it:
// https://cloud.google.com/security-command-center/docs/reference/model-armor/rest/v1/SanitizationResult
// (google.cloud.modelarmor.v1.SanitizationResult; JSON names are the proto's in lowerCamelCase).
// Members the checker does not use are ignored, so fields Google adds do not break it.
type sanitizeResponse struct {
	SanitizationResult *sanitizationResult `json:"sanitizationResult"`
}

type sanitizationResult struct {
	// FilterMatchState: NO_MATCH_FOUND or MATCH_FOUND.
	FilterMatchState string `json:"filterMatchState"`
	// FilterResults by filter name: "rai", "sdp", "pi_and_jailbreak", "malicious_uris",
	// "csam" (and "virus_scan" for files). Each is a FilterResult: an object with one
	// member, a union (raiFilterResult, sdpFilterResult, ...), decoded in judge.go.
	FilterResults map[string]map[string]json.RawMessage `json:"filterResults"`
	// InvocationResult: SUCCESS, PARTIAL (some filters skipped or failed) or FAILURE (all).
	InvocationResult     string                `json:"invocationResult"`
	SanitizationMetadata *sanitizationMetadata `json:"sanitizationMetadata"`
}

type sanitizationMetadata struct {
	// ErrorCode is an int64, which proto3 JSON writes as a string; either is accepted.
	ErrorCode    json.RawMessage `json:"errorCode"`
	ErrorMessage string          `json:"errorMessage"`
}

// filterState is what every filter's result has: whether it ran and whether it matched.
type filterState struct {
	// ExecutionState: EXECUTION_SUCCESS or EXECUTION_SKIPPED (a server-side error or a
	// missing permission, such as the service agent's on the SDP templates).
	ExecutionState string        `json:"executionState"`
	MatchState     string        `json:"matchState"`
	MessageItems   []messageItem `json:"messageItems"`
}

type messageItem struct {
	MessageType string `json:"messageType"` // INFO, WARNING or ERROR
	Message     string `json:"message"`
}

// raiResult is a raiFilterResult: RaiFilterTypeResults are by filter type, "dangerous",
// "harassment", "hate_speech", "sexually_explicit".
type raiResult struct {
	filterState
	RaiFilterTypeResults map[string]struct {
		FilterType string `json:"filterType"`
		MatchState string `json:"matchState"`
	} `json:"raiFilterTypeResults"`
}

// sdpResult is an sdpFilterResult: one of an inspection's findings or a de-identified copy.
type sdpResult struct {
	InspectResult    *sdpInspect    `json:"inspectResult"`
	DeidentifyResult *sdpDeidentify `json:"deidentifyResult"`
}

type sdpInspect struct {
	filterState
	Findings []struct {
		InfoType string `json:"infoType"`
	} `json:"findings"`
}

type sdpDeidentify struct {
	filterState
	// Data is the de-identified DataItem; its text is what the gateway sends on.
	Data *struct {
		Text *string `json:"text"`
	} `json:"data"`
	InfoTypes []string `json:"infoTypes"`
}
