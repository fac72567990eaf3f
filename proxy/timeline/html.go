package timeline

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// Write draws in as one HTML page on w.
func Write(w io.Writer, in Input) error {
	return WriteModel(w, Build(in))
}

// WriteModel writes the page for a built model.
func WriteModel(w io.Writer, m *Model) error {
	// encoding/json escapes <, > and & (and U+2028, U+2029), so the data
	// cannot end the script element it sits in.
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	page := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(m.Title),
		"{{CSS}}", pageCSS,
		"{{JS}}", pageJS,
		"{{DATA}}", string(data),
	).Replace(pageHTML)
	if _, err := io.WriteString(w, page); err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	return nil
}
