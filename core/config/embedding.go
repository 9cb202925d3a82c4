package config

// Model kinds (models.X.kind).
const (
	KindChat      = "chat"
	KindEmbedding = "embedding"
)

// Embedding tasks (models.X.task): what an embedding model's vectors are for. Backends whose
// vectors depend on it get it in their own words (Cohere's input_type search_document, Vertex
// AI's task_type RETRIEVAL_DOCUMENT, ...); the others embed the same either way. Documents and
// queries of one retrieval index are embedded through two gateway models over the same routes,
// one with task document, one with task query.
const (
	TaskDocument       = "document"
	TaskQuery          = "query"
	TaskSimilarity     = "similarity"
	TaskClassification = "classification"
	TaskClustering     = "clustering"
)

// MaxDimensions bounds an embedding model's dimensions: the largest models in use return
// 4,096; a vector a hundred times longer is a typo.
const MaxDimensions = 1 << 16

// Embedding reports whether the model serves embeddings rather than chat.
func (m *Model) Embedding() bool { return m.Kind == KindEmbedding }

// validateKind checks the settings that depend on the model's kind, and fills the task's
// default. An embedding model states its dimensions: the gateway checks every route against
// them when it is built (a route that cannot return vectors this long stops the start, naming
// its place), and checks every answer's vectors against them too.
func (m *Model) validateKind(p string, bad *problems) {
	switch m.Kind {
	case "":
		m.Kind = KindChat
	case KindChat, KindEmbedding:
	default:
		bad.add(p+".kind", " must be chat or embedding, got %q", m.Kind)
		return
	}
	if !m.Embedding() {
		if m.Dimensions != 0 {
			bad.add(p+".dimensions", ": only embedding models have dimensions (set kind: embedding)")
		}
		if m.Task != "" {
			bad.add(p+".task", ": only embedding models have a task (set kind: embedding)")
		}
		return
	}
	switch {
	case m.Dimensions == 0:
		bad.add(p+".dimensions", " is required for an embedding model: the length of the vectors every route returns")
	case m.Dimensions < 0 || m.Dimensions > MaxDimensions:
		bad.add(p+".dimensions", " must be between 1 and %d, got %d", MaxDimensions, m.Dimensions)
	}
	switch m.Task {
	case "":
		m.Task = TaskDocument
	case TaskDocument, TaskQuery, TaskSimilarity, TaskClassification, TaskClustering:
	default:
		bad.add(p+".task", " must be document, query, similarity, classification or clustering, got %q", m.Task)
	}
	if m.MaxOutputTokens != 0 {
		bad.add(p+".max_output_tokens", ": an embedding model has no output")
	}
	if pr := m.Price; pr != nil && (pr.OutputPerMTok != 0 || pr.CachedInputPerMTok != nil || pr.CacheWritePerMTok != nil) {
		bad.add(p+".price", ": an embedding model is priced per input token only (input_per_mtok)")
	}
}
