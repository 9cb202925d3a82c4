package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// located remembers where each value of the parsed document sits, so that an error names the
// key path a user can search for (models.example/chat.routes[1].weight) and its line.
type located struct {
	lines map[string]int        // key path -> line of its value
	paths map[*yaml.Node]string // value node -> key path
}

func locate(root *yaml.Node) *located {
	l := &located{lines: map[string]int{}, paths: map[*yaml.Node]string{}}
	walk(root, "", func(path string, n *yaml.Node) {
		l.lines[path] = n.Line
		l.paths[n] = path
	})
	return l
}

// walk calls visit for every value node under n (mapping keys are not values) with its key
// path: mapping keys joined by '.', sequence items as [i]. Aliases are not followed; their
// anchor is visited where it is defined.
func walk(n *yaml.Node, path string, visit func(path string, n *yaml.Node)) {
	if path != "" {
		visit(path, n)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if path != "" {
				key = path + "." + key
			}
			walk(n.Content[i+1], key, visit)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walk(c, path+"["+strconv.Itoa(i)+"]", visit)
		}
	}
}

// line returns the line of path's value, or of its nearest enclosing value when path itself
// is absent (a required key that was left out); 0 when the config did not come from YAML.
func (l *located) line(path string) int {
	if l == nil {
		return 0
	}
	for path != "" {
		if n, ok := l.lines[path]; ok {
			return n
		}
		cut := max(strings.LastIndexByte(path, '.'), strings.LastIndexByte(path, '['))
		if cut < 0 {
			break
		}
		path = path[:cut]
	}
	return 0
}

// Locate names a place in the config for an error message: "line 12: models.m.routes[1]"
// when the config was parsed from YAML, the key path alone otherwise.
func (c *Config) Locate(path string) string {
	if n := c.where.line(path); n > 0 {
		return fmt.Sprintf("line %d: %s", n, path)
	}
	return path
}

// nodeError is a decoding error raised by one value node (a bad duration); Parse turns it
// into an error that names the node's key path.
type nodeError struct {
	node *yaml.Node
	msg  string
}

func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %s", e.node.Line, e.msg) }

// nameNode adds key paths to a decoding error: a nodeError names its node's, and each line of
// a yaml.TypeError ("line 7: cannot unmarshal ...") names the one value written on that line,
// when only one is.
func (l *located) nameNode(err error) error {
	var ne *nodeError
	if errors.As(err, &ne) {
		if path, ok := l.paths[ne.node]; ok {
			return fmt.Errorf("line %d: %s: %s", ne.node.Line, path, ne.msg)
		}
		return err
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	for i, msg := range te.Errors {
		var line int
		if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr != nil {
			continue
		}
		if path := l.scalarOnLine(line); path != "" {
			prefix := fmt.Sprintf("line %d:", line)
			te.Errors[i] = prefix + " " + path + ":" + strings.TrimPrefix(msg, prefix)
		}
	}
	return te
}

// scalarOnLine returns the key path of the only scalar value on line n, or "".
func (l *located) scalarOnLine(n int) string {
	found := ""
	for node, path := range l.paths {
		if node.Kind == yaml.ScalarNode && node.Line == n {
			if found != "" {
				return ""
			}
			found = path
		}
	}
	return found
}

// problems collects validation errors, each naming its place, reported in document order.
type problems struct {
	where *located
	list  []problem
}

type problem struct {
	line int
	msg  string
}

// add records a problem at path; msg follows the path ("must not be negative", ": reason").
func (p *problems) add(path, format string, args ...any) {
	line := p.where.line(path)
	msg := path + fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	p.list = append(p.list, problem{line, msg})
}

func (p *problems) err() error {
	slices.SortStableFunc(p.list, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(a.msg, b.msg))
	})
	errs := make([]error, len(p.list))
	for i, pr := range p.list {
		errs[i] = errors.New(pr.msg)
	}
	return errors.Join(errs...)
}
