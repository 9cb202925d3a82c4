// Package publish sends the gateway's provider errors to EventBridge for the remediation
// function, off the request path: OnAttempt only queues, a background loop batches PutEvents
// calls, and when the queue is full or EventBridge fails the error is dropped and logged,
// never retried at the client's expense.
package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/events/remediation"
)

// The event's identity (contract: the rule pattern matches on both).
const (
	Source     = "fngate"
	DetailType = "ProviderError"
)

// RulePattern is the EventBridge rule pattern the remediation function should be targeted
// by: the gateway's provider errors of the classes remediation acts on, with an upstream
// error status or none at all (a connection failure has no status, and the detail then
// omits it).
const RulePattern = `{"source":["fngate"],"detail-type":["ProviderError"],"detail":{` +
	`"error_class":["rate_limited","overloaded","unavailable","auth","not_found","unsupported"],` +
	`"status":[{"numeric":[">=",400]},{"exists":false}]}}`

// PutEventsAPI is the part of the EventBridge client the publisher calls.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Defaults for Options.
const (
	DefaultQueue   = 1024
	DefaultLinger  = 100 * time.Millisecond
	DefaultTimeout = 5 * time.Second
	// maxBatch is PutEvents' limit of entries per call.
	maxBatch = 10
	// maxMessage bounds the upstream error text in an event, so ten entries stay far below
	// PutEvents' 256 KB request limit.
	maxMessage = 2048
)

// Options configure a Publisher.
type Options struct {
	Client PutEventsAPI // required
	// EventBus is the bus name or ARN; empty means the account's default bus.
	EventBus string
	// Queue is how many errors may wait; beyond it new errors are dropped. 0 means
	// DefaultQueue.
	Queue int
	// Linger is how long a partial batch waits for more errors; 0 means DefaultLinger.
	Linger time.Duration
	// Timeout bounds one PutEvents call; 0 means DefaultTimeout.
	Timeout time.Duration
	// Logger receives drop and failure lines (rate-limited); nil discards them.
	Logger *slog.Logger
}

// Stats counts what happened to queued errors.
type Stats struct {
	Published int64 // accepted by EventBridge
	Failed    int64 // refused by EventBridge or lost with a failed call
	Dropped   int64 // not queued: the queue was full or the publisher closed
}

// Publisher queues provider errors and sends them in batches. Safe for concurrent use.
type Publisher struct {
	client  PutEventsAPI
	bus     *string
	linger  time.Duration
	timeout time.Duration
	log     *slog.Logger

	queue  chan remediation.Record
	flush  chan chan struct{}
	stop   chan struct{}
	done   chan struct{}
	mu     sync.RWMutex // OnAttempt holds it shared; Close exclusively, so no send follows the close
	closed bool

	published, failed, dropped atomic.Int64
	dropLog, failLog           logLimiter
}

// New starts a publisher; Close it on shutdown to send what is queued.
func New(opt Options) (*Publisher, error) {
	if opt.Client == nil {
		return nil, errors.New("publish: Options.Client is required")
	}
	p := &Publisher{
		client:  opt.Client,
		linger:  opt.Linger,
		timeout: opt.Timeout,
		log:     opt.Logger,
		flush:   make(chan chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if opt.EventBus != "" {
		p.bus = aws.String(opt.EventBus)
	}
	q := opt.Queue
	if q <= 0 {
		q = DefaultQueue
	}
	p.queue = make(chan remediation.Record, q)
	if p.linger <= 0 {
		p.linger = DefaultLinger
	}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	go p.loop()
	return p, nil
}

// OnAttempt is gateway.Options.OnAttempt: it queues a failed attempt's record and returns at
// once, whatever EventBridge is doing.
func (p *Publisher) OnAttempt(a *record.Attempt) {
	if !a.Failed() {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.drop("the publisher is closed")
		return
	}
	select {
	case p.queue <- Detail(a):
	default:
		p.drop("the queue is full")
	}
}

func (p *Publisher) drop(why string) {
	n := p.dropped.Add(1)
	if p.dropLog.allow() {
		p.log.Warn("provider error not published", slog.String("why", why), slog.Int64("dropped_total", n))
	}
}

// Detail is the event detail for an attempt: the same record, with the same keys, as the
// gateway's provider_error log line.
func Detail(a *record.Attempt) remediation.Record {
	msg := a.ErrorMessage
	if len(msg) > maxMessage {
		n := maxMessage
		for n > 0 && !utf8.RuneStart(msg[n]) {
			n--
		}
		msg = msg[:n]
	}
	return remediation.Record{
		Time:          a.Time.UTC(),
		RequestID:     a.RequestID,
		Endpoint:      a.Endpoint,
		Model:         a.Model,
		Route:         a.Route,
		Connection:    a.Connection,
		Provider:      a.Provider,
		UpstreamModel: a.UpstreamModel,
		Residency:     a.Residency,
		Attempt:       a.Attempt,
		Outcome:       a.Outcome,
		Status:        a.Status,
		ErrorClass:    a.ErrorClass,
		ErrorCode:     a.ErrorCode,
		ErrorMessage:  msg,
	}
}

// Flush sends everything queued before the call and waits for it, or for ctx. A Lambda
// handler may call it after the response is complete: a frozen instance sends nothing.
func (p *Publisher) Flush(ctx context.Context) error {
	ack := make(chan struct{})
	select {
	case p.flush <- ack:
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting errors, sends what is queued and waits for it, or for ctx.
func (p *Publisher) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns the counters so far.
func (p *Publisher) Stats() Stats {
	return Stats{Published: p.published.Load(), Failed: p.failed.Load(), Dropped: p.dropped.Load()}
}

func (p *Publisher) loop() {
	defer close(p.done)
	var batch []remediation.Record
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for {
		select {
		case r := <-p.queue:
			if len(batch) == 0 {
				linger.Reset(p.linger)
			}
			batch = append(batch, r)
			if len(batch) == maxBatch {
				linger.Stop()
				p.send(batch)
				batch = batch[:0]
			}
		case <-linger.C:
			p.send(batch)
			batch = batch[:0]
		case ack := <-p.flush:
			linger.Stop()
			batch = p.drain(batch)
			close(ack)
		case <-p.stop:
			// OnAttempt can no longer send (closed is set under the lock), so draining the
			// channel empties it for good.
			linger.Stop()
			p.drain(batch)
			return
		}
	}
}

// drain sends the partial batch and everything queued, in full batches.
func (p *Publisher) drain(batch []remediation.Record) []remediation.Record {
	for {
		select {
		case r := <-p.queue:
			batch = append(batch, r)
			if len(batch) == maxBatch {
				p.send(batch)
				batch = batch[:0]
			}
		default:
			p.send(batch)
			return batch[:0]
		}
	}
}

func (p *Publisher) send(batch []remediation.Record) {
	if len(batch) == 0 {
		return
	}
	entries := make([]types.PutEventsRequestEntry, 0, len(batch))
	for _, r := range batch {
		detail, err := json.Marshal(r)
		if err != nil { // a Record always marshals; keep the count honest anyway
			p.failed.Add(1)
			continue
		}
		entries = append(entries, types.PutEventsRequestEntry{
			Source:       aws.String(Source),
			DetailType:   aws.String(DetailType),
			Detail:       aws.String(string(detail)),
			Time:         aws.Time(r.Time),
			EventBusName: p.bus,
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	out, err := p.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
	if err != nil {
		p.failed.Add(int64(len(entries)))
		p.failure(fmt.Sprintf("PutEvents failed: %v", err), len(entries))
		return
	}
	refused := int(out.FailedEntryCount)
	p.published.Add(int64(len(entries) - refused))
	if refused == 0 {
		return
	}
	p.failed.Add(int64(refused))
	reason := ""
	for _, e := range out.Entries {
		if e.ErrorCode != nil {
			reason = aws.ToString(e.ErrorCode) + ": " + aws.ToString(e.ErrorMessage)
			break
		}
	}
	p.failure("EventBridge refused entries: "+reason, refused)
}

func (p *Publisher) failure(msg string, n int) {
	if p.failLog.allow() {
		p.log.Warn("provider errors not published", slog.String("error", msg), slog.Int("entries", n),
			slog.Int64("failed_total", p.failed.Load()))
	}
}

// logLimiter lets one line through per interval, so a full queue or an EventBridge outage
// does not flood the log it is meant to protect.
type logLimiter struct{ last atomic.Int64 }

const logEvery = 10 * time.Second

func (l *logLimiter) allow() bool {
	now := time.Now().UnixNano()
	last := l.last.Load()
	return now-last >= int64(logEvery) && l.last.CompareAndSwap(last, now)
}
