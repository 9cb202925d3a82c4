package cli

import (
	"context"
	"encoding/json"
	"net/http"
)

// whoami shows who the API takes the caller for (GET /admin/v1/me): a check of -url and the
// token before anything else.
func (o *op) whoami(ctx context.Context, args []string) error {
	fs := o.flags("whoami")
	if _, err := o.parse(fs, args, 0, "whoami"); err != nil {
		return err
	}
	return o.do(ctx, http.MethodGet, "me", nil, nil, func(data []byte) error {
		var p struct{ ID, Name, Role, Team string }
		if err := json.Unmarshal(data, &p); err != nil {
			return err
		}
		return table(o.env.Stdout, "ID\tNAME\tROLE\tTEAM", [][]string{{p.ID, dash(p.Name), dash(p.Role), dash(p.Team)}})
	})
}
