// Command mcpgen turns functions and methods marked with a //mcp:tool
// directive into MCP tools. It reads the package with go/packages and writes,
// next to every source file that has such functions, the registration code
// a person would write with the SDK's public API: an input struct per tool
// and hexmcp.Func calls with the tool's name, description, annotations,
// icons, _meta and output schema. It is the Go counterpart of the PHP SDK's
// #[McpTool] attribute and its docblock fallback.
//
// # Usage
//
// Add a go:generate line to one file of the package and run go generate:
//
//	//go:generate go run github.com/hexmcp/hexmcp/cmd/mcpgen
//
// or install the command (go install github.com/hexmcp/hexmcp/cmd/mcpgen@latest)
// and run it in the package directory:
//
//	mcpgen [-tags list] [-v] [-check] [dir]
//
// dir defaults to the current directory; -tags selects build tags as for
// go build; -v prints the files written or deleted; -check writes nothing
// and exits with status 1, naming them, when generated files are missing,
// out of date or stale. Commit the generated files, and let CI check that
// they are up to date:
//
//	go generate ./... && git diff --exit-code
//
// (or mcpgen -check in each package, which needs no git).
//
// # Declaring a tool
//
//	// PerformCalculation performs arithmetic operations with validation.
//	//
//	// Parameters:
//	//   - a: First operand
//	//   - b: Second operand
//	//   - operation: The operation to apply
//	//
//	//mcp:tool name=calculate title="Calculator" readOnly idempotent
//	func (c *Calculator) PerformCalculation(ctx context.Context, a, b float64, operation Operation) (float64, error)
//
// gives the tool "calculate" with the description "Performs arithmetic
// operations with validation." and the input schema {"a": number, "b":
// number, "operation": string with the enum of Operation's constants}, all
// required, each with its description. Register it with
// calc.MCPTools() (see "What is generated").
//
// # The directive
//
// A line //mcp:tool (no space after //) in the doc comment of a function or
// method declaration marks it as a tool; gofmt puts a blank comment line
// before it, as for every directive. Options follow on the same line,
// separated by spaces. A long directive may be split over several
// //mcp:tool lines of the same doc comment: their options are read as one
// list. Values are bare words (no spaces or quotes) or Go double-quoted
// strings ("with spaces", escapes as in Go).
//
//	name=calculate           the tool name (1–128 of A-Z a-z 0-9 _ - .); default:
//	                         the Go name with its leading capitals lowered as
//	                         hexmcp.NewTool does it (GetWeather → getWeather,
//	                         URLFetch → urlFetch)
//	title="Calculator"       hexmcp.WithTitle, and the title of the annotations
//	                         (the only title clients of 2025-03-26 read)
//	description="..."        the description, instead of the doc comment's;
//	                         description="" gives none
//	readOnly, destructive,   annotation hints set to true; readOnly=false etc.
//	idempotent, openWorld    set them to false; hints not given stay unset
//	icon=https://...         an icon by URL (https:, http: or data:), or
//	icon=name                the name of a package-level constant or variable
//	                         of this package holding the URL (a string), a
//	                         hexmcp.Icon (for mimeType, sizes and theme) or a
//	                         []hexmcp.Icon; repeatable, kept in order
//	meta.key=value           an entry of _meta: meta.example.com/category=math.
//	                         Bare true, false and numbers are JSON booleans and
//	                         numbers; quoted values and other words are strings
//	outputSchema=Type        hexmcp.WithOutputSchemaFrom of Type's zero value: a
//	                         type of this package or of one imported by the
//	                         file ([]Item, time.Time, map[string]Stat, ...)
//	default.param=value      a default for a string, boolean or numeric
//	                         parameter (see below)
//
// # Parameters
//
// Every parameter of the function is a property of the input schema, under
// its Go name, except two that the SDK supplies: a context.Context receives
// the call's context, and a *hexmcp.RequestContext (the same type as
// *app.RequestContext) receives hexmcp.RequestFrom(ctx). Each property is a
// field of the generated input struct, so the schema follows the SDK's
// rules for struct fields (domain.InferSchema):
//
//   - basic types, named types (by their underlying type), slices, arrays,
//     maps with string keys, structs (by reference to the type: its fields
//     and tags are the SDK's business), time.Time, json.RawMessage and any;
//   - a pointer parameter is optional: it is left out of "required", and is
//     nil when the client leaves it out; a variadic parameter is an optional
//     array;
//   - a named string or integer type of this module with constants of that
//     type declared in its package gets those constants as its enum, in
//     declaration order (duplicates once). A type with a MarshalJSON,
//     MarshalText or JSONSchema method chooses its JSON form itself and gets
//     none (a JSONSchema method is also how a bit-flag type opts out), and so
//     do types of other modules and the standard library, whose constants
//     are often units rather than values (time.Duration);
//   - default.param=value adds "default" to the schema, makes the parameter
//     optional (its field becomes a pointer) and passes value to the function
//     when the client leaves the parameter out. Only non-pointer string,
//     boolean and numeric parameters take defaults, and the value must parse
//     as the parameter's type (and be one of its enum, if it has one).
//
// Channels, functions, complex numbers, interfaces other than any, maps with
// other keys and type parameters are errors, as are unnamed or blank (_)
// parameters, since the name is the JSON name.
//
// # Descriptions
//
// The tool's description is its doc comment as go doc shows it: the summary
// and the long description, paragraphs joined into single lines and
// separated by blank lines, lists and code blocks kept. The function's own
// name at the start, which Go style puts there and the model never sees, is
// dropped (PerformCalculation performs ... → Performs ...). Directive lines
// and the parameter block are left out. Without a doc comment the tool has
// no description: it is never made up from the name.
//
// Parameter descriptions come from a block of the doc comment: a line that
// reads exactly
//
//	Parameters:
//
// followed by a Go doc list with one item per parameter, "name:
// description". gofmt writes the list as "//   - name: description",
// continuation lines indented by four more spaces; any list marker (-, *,
// +, •, 1.) is accepted. The block ends at the first line that is neither
// a list item nor a continuation. An item naming no input parameter (or an
// injected one), a parameter described twice, a second block, and a
// Parameters: line with no list are errors. Parameters left out of the
// block have no description.
//
// # Results
//
// The function returns (T, error), T, error or nothing. The generated
// handler passes T on (the SDK turns it into content and, for structs, a
// structured result with an output schema); a function that returns only an
// error, or nothing, is void: its result is the text "(null)".
//
// # What is generated
//
// For each source file x.go with tools, mcpgen writes x_mcp.go, starting
// with "// Code generated by mcpgen. DO NOT EDIT." and carrying the build
// constraints of x.go (its //go:build line, and the GOOS/GOARCH of a name
// like x_linux.go). It holds, in source order:
//
//   - for each tool with parameters, an unexported input struct named after
//     the tool (calculate → calculateInput, get_weather → getWeatherInput),
//     one field per input parameter with the tags json, description, enum and
//     default; a tool without parameters takes struct{};
//   - per receiver type T, a method MCPTools() []hexmcp.Tool returning the
//     tools of T's //mcp:tool methods, and for plain functions a
//     package-level function MCPTools() []hexmcp.Tool.
//
// Each tool is built by a closure that calls the function with the fields of
// the input:
//
//	hexmcp.Func(
//		func(ctx context.Context, in calculateInput) (float64, error) {
//			return c.PerformCalculation(ctx, in.A, in.B, in.Operation)
//		},
//		hexmcp.WithName("calculate"),
//		...
//	)
//
// so that a function whose signature changed without regeneration makes the
// build fail instead of misbehaving. A parameter with a default is read
// through a local variable set to the default and replaced by the field
// when the client sent it.
//
// When the //mcp:tool methods of one type (or the package's //mcp:tool
// functions) are spread over several files, each file's generated code has
// an unexported mcpToolsFrom<File>Go (mcpToolsFromStoreAdminGo for
// store_admin.go) instead, and the first of those files (by name) also gets
// MCPTools, which concatenates them in file-name order. Either way the
// caller writes calc.MCPTools() or MCPTools(). MCPTools is a method with a
// pointer receiver when any of the type's tool methods has one.
//
// Generated files of source files that no longer have tools (or no longer
// exist) are deleted. Only files whose first line is the "Code generated by
// mcpgen" header are ever replaced or deleted: a hand-written x_mcp.go is an
// error. Files are rewritten only when their contents change, and the output
// is gofmt'ed and deterministic, so running mcpgen twice changes nothing.
// The package's existing generated files are ignored while it is loaded, and
// type errors elsewhere (such as a call of MCPTools before it exists) are
// tolerated unless they touch a tool's signature. Test files (_test.go) are
// not read.
//
// Import names of the generated code avoid the package's identifiers (a
// package-level hexmcp variable makes the SDK's package mcphexmcp), and
// generated names that clash with the package's own (an input type, or
// MCPTools) are errors.
//
// # Errors
//
// A mistake stops mcpgen before it writes anything, with one line per
// problem on standard error in the compiler's form, and exit status 1:
//
//	calc.go:12: unknown option "readonly" (known options: name, title, ...)
//	calc.go:13: parameter ch: channel type chan int is not supported
//
// Among them: an unknown option or directive (//mcp:tools), a bad name, an
// unsupported parameter or result type, a bad option value, a //mcp:tool
// that is not in the doc comment of a function or method declaration, a
// generic function, two tools with one name, and the doc-comment mistakes
// listed above.
//
// # Without a generation step
//
// hexmcp.ToolsOf registers at run time every exported method of a value that
// takes one input struct, named by the same case rule, without
// descriptions (reflection sees no comments).
package main
