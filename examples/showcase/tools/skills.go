package tools

import (
	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/extensions/skills"
)

// Skills is the showcase's Skills extension (SEP-2640): one skill that
// teaches a model to use the calculator tools, with a reference file.
func Skills() (hexmcp.Extension, error) {
	return skills.New(skills.Options{Skills: []skills.Skill{{
		Name:        "careful-arithmetic",
		Description: "Do arithmetic with the calculator tools instead of in your head, and check divisions",
		License:     "MIT",
		Body: "# Careful arithmetic\n\n" +
			"1. Call calculate for every operation, one at a time.\n" +
			"2. Before a division, check the divisor is not zero (see references/DIVISION.md).\n" +
			"3. Report the result with the operations that produced it.\n",
		Files: []skills.File{{
			Path: "references/DIVISION.md",
			Text: "# Division\n\ndivideNumbers refuses a zero divisor with a tool error: read it, and ask the user for another.\n",
		}},
	}}})
}
