package modelarmor

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/fngate/fngate/core/guardrail"
)

// template is the part of a Template resource (GET /v1/{name}) the check reads:
// https://cloud.google.com/security-command-center/docs/reference/model-armor/rest/v1/projects.locations.templates#Template
type template struct {
	FilterConfig struct {
		SdpSettings struct {
			AdvancedConfig *struct {
				InspectTemplate    string `json:"inspectTemplate"`
				DeidentifyTemplate string `json:"deidentifyTemplate"`
			} `json:"advancedConfig"`
		} `json:"sdpSettings"`
	} `json:"filterConfig"`
}

// templateCheck verifies, once per process, that the template de-identifies through the
// guardrail's deidentify_template: mode mask relies on it, and without it Model Armor only
// inspects, so every email would block instead of being masked. A verdict of the check,
// either way, is remembered; a fetch that failed is tried again at the next Check.
type templateCheck struct {
	lock     chan struct{} // one fetch at a time, waited for within the Check's context
	verified atomic.Bool
	refused  atomic.Pointer[guardrail.Error]
}

func (t *templateCheck) init() { t.lock = make(chan struct{}, 1) }

func (t *templateCheck) check(ctx context.Context, c *Checker) error {
	if c.deidentify == "" || t.verified.Load() {
		return nil
	}
	if e := t.refused.Load(); e != nil {
		copied := *e
		return &copied
	}
	select {
	case t.lock <- struct{}{}:
	case <-ctx.Done():
		return failure(ctx, ctx.Err())
	}
	defer func() { <-t.lock }()
	if t.verified.Load() || t.refused.Load() != nil { // another Check decided while this one waited
		return t.check(ctx, c)
	}
	answer, err := c.call(ctx, http.MethodGet, c.resource(), nil)
	if err != nil {
		var ge *guardrail.Error
		if errors.As(err, &ge) {
			copied := *ge
			copied.Message = "cannot read template " + c.template + " to check its de-identify template: " + ge.Message
			copied.Err = err
			return &copied
		}
		return err
	}
	var tpl template
	if err := json.Unmarshal(answer, &tpl); err != nil {
		return malformed("the template "+c.template+" is not a readable Template: "+err.Error(), err)
	}
	got := ""
	if a := tpl.FilterConfig.SdpSettings.AdvancedConfig; a != nil {
		got = a.DeidentifyTemplate
	}
	if got != c.deidentify {
		described := "no de-identify template"
		if got != "" {
			described = "de-identify template " + bounded(got)
		}
		refused := &guardrail.Error{Kind: guardrail.ErrInvalid, Message: "template " + c.template +
			" does not de-identify through the configured template " + c.deidentify + " (its sdpSettings.advancedConfig has " + described + ")"}
		t.refused.Store(refused)
		copied := *refused
		return &copied
	}
	t.verified.Store(true)
	return nil
}
