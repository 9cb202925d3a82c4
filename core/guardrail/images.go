package guardrail

import (
	"context"
	"encoding/base64"

	"github.com/fngate/fngate/core/llm"
)

// Images: a guardrail service that takes images judges them with the texts (Bedrock's
// ApplyGuardrail takes jpeg and png blocks). Model Armor's sanitize calls and the local kind
// read text only, so their checkers do not implement ImageChecker and are never sent any.

// Image is an image of a request as a service is sent it: its bytes, and its format.
type Image struct {
	Format string // "jpeg" or "png"
	Data   []byte
}

// ImageChecker is a Checker whose service also judges images. CheckImages assesses texts
// (as Check does) and images together; the verdict's Masked, when it masks, is of the texts
// only (a service masks no image: it passes or blocks one).
type ImageChecker interface {
	Checker
	CheckImages(ctx context.Context, src Source, texts []string, images []Image) (Verdict, error)
}

// imageFormats are the media types a service that takes images is sent, by their format.
var imageFormats = map[string]string{"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png"}

// ImagesOf collects the images of req a service can be sent: inline (base64) jpeg and png,
// in the messages and in tool results. An image by URL is not fetched, and other formats
// (gif, webp) are not what the services take: those go to the model unjudged.
func ImagesOf(req *llm.Request) []Image {
	var out []Image
	add := func(p *llm.Part) {
		format, ok := imageFormats[p.MediaType]
		if p.Kind != llm.PartImage || !ok || p.Data == "" {
			return
		}
		b, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return // the door checked it; a route would refuse it as the client's mistake
		}
		out = append(out, Image{Format: format, Data: b})
	}
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			p := &req.Messages[i].Parts[j]
			add(p)
			for k := range p.Content {
				add(&p.Content[k])
			}
		}
	}
	return out
}
