package gateway

import (
	"net/http"

	"github.com/fngate/fngate/core/llm"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/record"
)

// answer serves a non-streaming request, failing over while the failure allows and
// attempts remain.
func (q *request) answer(routes []*route) {
	q.failover(routes, false, func(a *attempt) *providers.Error {
		ans, err := a.rt.provider.Generate(a.onHeaders(), q.req, a.rt.target)
		a.took()
		if err != nil {
			return a.failure(err)
		}
		a.answered(ans)
		a.outChars = answerChars(ans)
		a.usage = &ans.Usage
		if oe := q.guardAnswer(a, ans); oe != nil {
			a.finishError(oe)
			q.fail(a.rt, oe)
			return nil
		}
		a.finish(record.OutcomeOK, nil)
		q.writeAnswer(a.rt, ans)
		q.cacheAnswer(ans)
		return nil
	})
}

func (q *request) writeAnswer(rt *route, a *llm.Answer) {
	a.Usage.WithTotal()
	var calls toolCalls
	calls.answer(a)
	body := q.wire.(door).appendAnswer(make([]byte, 0, 512), &q.rc, a)
	body = append(body, '\n')
	q.g.setRouteHeaders(&q.w, &q.rc, rt)
	writeJSON(&q.w, http.StatusOK, body)
	q.done(http.StatusOK, rt.id, nil)
}
