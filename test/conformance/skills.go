package main

import (
	"github.com/hexmcp/hexmcp/app"
	"github.com/hexmcp/hexmcp/extensions/skills"
)

// conformanceSkills is the Skills extension (SEP-2640) the sep-2640-skills-*
// scenarios exercise: one skill with a supporting file in a subdirectory, so
// that resources/directory/read has a subdirectory to list.
func conformanceSkills() (app.Extension, error) {
	return skills.New(skills.Options{Skills: []skills.Skill{{
		Name:        "pdf-processing",
		Description: "Extract, fill, and assemble PDF documents",
		License:     "Apache-2.0",
		Metadata:    map[string]string{"author": "hexmcp", "version": "1.0"},
		Body: "# PDF processing\n\n" +
			"Extract text and tables with the pdf tools; for forms, read references/FORMS.md first.\n",
		Files: []skills.File{{
			Path: "references/FORMS.md",
			Text: "# Forms\n\nFill each field by its name, then flatten the form.\n",
		}},
	}}})
}
