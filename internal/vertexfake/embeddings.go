package vertexfake

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"cloud.google.com/go/aiplatform/apiv1/aiplatformpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fngate/fngate/core/providers/mock"
)

// EmbeddingModels are the text embedding models the fake serves: their dimensions and the
// most instances one Predict call may carry.
var EmbeddingModels = map[string]struct{ Dims, Batch int }{
	"text-embedding-005":              {768, 250},
	"text-embedding-004":              {768, 250},
	"text-multilingual-embedding-002": {768, 250},
	"gemini-embedding-001":            {3072, 1},
}

// taskTypes are the task types Vertex AI's text embedding models take.
var taskTypes = map[string]bool{
	"RETRIEVAL_QUERY": true, "RETRIEVAL_DOCUMENT": true, "SEMANTIC_SIMILARITY": true, "CLASSIFICATION": true,
	"CLUSTERING": true, "QUESTION_ANSWERING": true, "FACT_VERIFICATION": true, "CODE_RETRIEVAL_QUERY": true,
}

// Vector is the fake's embedding of a text: mock.Embedding, the vector the mock and the other
// fakes give it too.
func Vector(text string, dims int) []float32 { return mock.Embedding(text, dims) }

// Predict answers a text embeddings call: one prediction per instance, its vector and its
// statistics (the text's words as token_count, truncated false).
func (s *Server) Predict(ctx context.Context, req *aiplatformpb.PredictRequest) (*aiplatformpb.PredictResponse, error) {
	rep, err := s.accept(ctx, &Request{Method: "Predict", Resource: req.GetEndpoint(), Predict: req}, s.ValidatePredict(req))
	if err != nil {
		return nil, err
	}
	if err := wait(ctx, rep.Delay); err != nil {
		return nil, err
	}
	if rep.Err != nil {
		return nil, rep.Err
	}
	m := EmbeddingModels[modelOf(req.GetEndpoint())]
	dims := m.Dims
	if d := req.GetParameters().GetStructValue().GetFields()["outputDimensionality"]; d != nil {
		dims = int(d.GetNumberValue())
	}
	out := &aiplatformpb.PredictResponse{DeployedModelId: "", Model: req.GetEndpoint()}
	chars := 0
	for _, in := range req.GetInstances() {
		text := in.GetStructValue().GetFields()["content"].GetStringValue()
		chars += len(text)
		v := Vector(text, dims)
		values := make([]*structpb.Value, len(v))
		for i, f := range v {
			values[i] = structpb.NewNumberValue(float64(f))
		}
		out.Predictions = append(out.Predictions, structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
			"embeddings": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
				"values": structpb.NewListValue(&structpb.ListValue{Values: values}),
				"statistics": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
					"token_count": structpb.NewNumberValue(float64(len(strings.Fields(text)))),
					"truncated":   structpb.NewBoolValue(false),
				}}),
			}}),
		}}))
	}
	out.Metadata = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"billableCharacterCount": structpb.NewNumberValue(float64(chars)),
	}})
	return out, nil
}

// ValidatePredict checks a text embeddings call as Vertex AI does: the endpoint names a
// Google text embedding model of the fake's project and location; there is at least one
// instance and no more than the model takes (250, or one for gemini-embedding-001); each
// instance has a non-empty content, and only content, task_type (a known type) and title
// (with RETRIEVAL_DOCUMENT only); parameters hold only autoTruncate (a boolean) and
// outputDimensionality (an integer from 1 to the model's dimensions).
func (s *Server) ValidatePredict(req *aiplatformpb.PredictRequest) string {
	if msg := s.resource(req.GetEndpoint(), "google"); msg != "" {
		return msg
	}
	model := modelOf(req.GetEndpoint())
	m, ok := EmbeddingModels[model]
	if !ok {
		return "Publisher model " + model + " is not a text embedding model"
	}
	ins := req.GetInstances()
	switch {
	case len(ins) == 0:
		return "instances must not be empty"
	case len(ins) > m.Batch:
		return fmt.Sprintf("Unable to submit request because the number of instances (%d) exceeds the maximum of %d for %s.", len(ins), m.Batch, model)
	}
	for i, in := range ins {
		f := in.GetStructValue().GetFields()
		if f == nil {
			return fmt.Sprintf("instances[%d] must be an object", i)
		}
		for _, k := range sortedKeys(f) {
			switch k {
			case "content", "task_type", "title":
			default:
				return fmt.Sprintf("instances[%d]: unknown field %q", i, k)
			}
		}
		c, ok := f["content"].GetKind().(*structpb.Value_StringValue)
		if !ok || c.StringValue == "" {
			return fmt.Sprintf("instances[%d].content must be a non-empty string", i)
		}
		if tt, ok := f["task_type"]; ok && !taskTypes[tt.GetStringValue()] {
			return fmt.Sprintf("instances[%d].task_type %q is not a task type", i, tt.GetStringValue())
		}
		if _, ok := f["title"]; ok && f["task_type"].GetStringValue() != "RETRIEVAL_DOCUMENT" {
			return fmt.Sprintf("instances[%d]: title is only allowed with task_type RETRIEVAL_DOCUMENT", i)
		}
	}
	params := req.GetParameters()
	if params == nil {
		return ""
	}
	f := params.GetStructValue().GetFields()
	if f == nil {
		return "parameters must be an object"
	}
	for _, k := range sortedKeys(f) {
		v := f[k]
		switch k {
		case "autoTruncate":
			if _, ok := v.GetKind().(*structpb.Value_BoolValue); !ok {
				return "parameters.autoTruncate must be a boolean"
			}
		case "outputDimensionality":
			n, ok := v.GetKind().(*structpb.Value_NumberValue)
			if !ok || n.NumberValue != float64(int(n.NumberValue)) || n.NumberValue < 1 || int(n.NumberValue) > m.Dims {
				return fmt.Sprintf("parameters.outputDimensionality must be an integer from 1 to %d for %s", m.Dims, model)
			}
		default:
			return fmt.Sprintf("parameters: unknown field %q", k)
		}
	}
	return ""
}

func sortedKeys(m map[string]*structpb.Value) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
