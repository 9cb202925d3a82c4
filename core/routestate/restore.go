package routestate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ActionRollback names the snapshot a Restore writes, so a rollback can itself be undone.
const ActionRollback = "rollback"

// ErrChanged means the route changed after the action being rolled back; restoring would
// silently undo the later change too.
var ErrChanged = errors.New("routestate: the route changed after that action")

// NewActionID makes an action id that sorts by time and is the same for the same inputs, so a
// retried write of the same decision collides instead of duplicating it.
func NewActionID(at time.Time, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return at.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(h[:5])
}

// Restore puts a route back to the state it had before the action actionID, as a new action
// with its own snapshot. Unless force is set it refuses (ErrChanged) when the route has been
// written since that action. It returns the new snapshot.
func Restore(ctx context.Context, s Store, actionID string, now time.Time, force bool) (Snapshot, error) {
	old, err := s.Snapshot(ctx, actionID)
	if err != nil {
		return Snapshot{}, fmt.Errorf("action %s: %w", actionID, err)
	}
	cur, err := s.Get(ctx, old.Route)
	if err != nil {
		return Snapshot{}, err
	}
	if cur.Version != old.After.Version && !force {
		return Snapshot{}, fmt.Errorf("%w: %s is at version %d (%s), the action left version %d (forcing the restore would undo the later change too)",
			ErrChanged, old.Route, cur.Version, cur.Status, old.After.Version)
	}
	eventID := "rollback:" + actionID
	next := State{
		Route:        old.Route,
		Status:       old.Before.Status,
		Until:        old.Before.Until,
		Reason:       old.Before.Reason,
		Incident:     old.Before.Incident,
		IncidentLink: old.Before.IncidentLink,
		ChatOnly:     old.Before.ChatOnly,
		Source:       old.Before.Source,
		EventID:      eventID,
		ActionID:     NewActionID(now, eventID, old.Route, fmt.Sprint(cur.Version)),
		Since:        now,
		Version:      cur.Version,
		UpdatedAt:    now,
	}
	if next.Status == "" {
		next.Status = Active
	}
	snap := &Snapshot{
		ActionID: next.ActionID,
		Route:    old.Route,
		Action:   ActionRollback,
		EventID:  eventID,
		Why:      "rollback of " + actionID + " (" + old.Action + ")",
		At:       now,
		Before:   cur,
	}
	if _, err := s.Put(ctx, next, snap); err != nil {
		return Snapshot{}, err
	}
	return *snap, nil
}
