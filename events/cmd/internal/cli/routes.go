package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// routeView is the part of a route the table shows.
type routeView struct {
	ID            string            `json:"id"`
	Model         string            `json:"model"`
	Connection    string            `json:"connection"`
	UpstreamModel string            `json:"upstream_model"`
	Status        string            `json:"status"`
	Until         *time.Time        `json:"until"`
	Reason        string            `json:"reason"`
	Source        string            `json:"source"`
	Remediations  []json.RawMessage `json:"remediations"`
}

const routesUsage = "routes list | cool [-for 15m] [-reason TEXT] ID | restore [-reason TEXT] ID"

func (o *op) routes(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(o.env.Stderr, "usage: fngate", routesUsage)
		return errUsage
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "list":
		fs := o.flags("routes list")
		if _, err := o.parse(fs, rest, 0, "routes list"); err != nil {
			return err
		}
		return o.do(ctx, http.MethodGet, "routes", nil, nil, o.showRoutes)
	case "cool":
		fs := o.flags("routes cool")
		d := fs.Duration("for", 15*time.Minute, "how long the route stays cooled (the gateway skips it)")
		reason := fs.String("reason", "", "why, recorded with the route and in the audit log")
		pos, err := o.parse(fs, rest, 1, "routes cool [-for 15m] [-reason TEXT] ID")
		if err != nil {
			return err
		}
		if *d <= 0 {
			fmt.Fprintln(o.env.Stderr, "fngate routes cool: -for must be positive")
			return errUsage
		}
		body := map[string]any{"for": d.String()}
		setField(body, "reason", *reason)
		return o.do(ctx, http.MethodPost, "routes/"+url.PathEscape(pos[0])+"/cool", nil, body, o.showRoute)
	case "restore":
		fs := o.flags("routes restore")
		reason := fs.String("reason", "", "why, recorded with the route and in the audit log")
		pos, err := o.parse(fs, rest, 1, "routes restore [-reason TEXT] ID")
		if err != nil {
			return err
		}
		body := map[string]any{}
		setField(body, "reason", *reason)
		return o.do(ctx, http.MethodPost, "routes/"+url.PathEscape(pos[0])+"/restore", nil, body, o.showRoute)
	default:
		fmt.Fprintf(o.env.Stderr, "fngate routes: unknown command %q\nusage: fngate %s\n", sub, routesUsage)
		return errUsage
	}
}

func (o *op) showRoutes(data []byte) error {
	var page struct {
		Data []routeView `json:"data"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return err
	}
	rows := make([][]string, 0, len(page.Data))
	for _, r := range page.Data {
		rows = append(rows, r.cells())
	}
	return table(o.env.Stdout, "ID\tMODEL\tCONNECTION\tUPSTREAM MODEL\tSTATUS\tUNTIL\tREASON\tSOURCE\tREMEDIATIONS", rows)
}

func (r *routeView) cells() []string {
	return []string{r.ID, dash(r.Model), dash(r.Connection), dash(r.UpstreamModel), dash(r.Status), whenPtr(r.Until),
		dash(r.Reason), dash(r.Source), strconv.Itoa(len(r.Remediations))}
}

// showRoute prints the route a cool or a restore answers.
func (o *op) showRoute(data []byte) error {
	var r routeView
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	return table(o.env.Stdout, "ID\tMODEL\tCONNECTION\tUPSTREAM MODEL\tSTATUS\tUNTIL\tREASON\tSOURCE\tREMEDIATIONS", [][]string{r.cells()})
}

func setField(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}
