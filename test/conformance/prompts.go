package main

import (
	"context"
	"strings"

	"github.com/hexmcp/hexmcp"
	"github.com/hexmcp/hexmcp/domain"
)

// conformancePrompts returns the prompts the suite's prompts-* scenarios
// get (the names, arguments and messages of their "Server Implementation
// Requirements"); test_prompt_with_arguments's arg1 has a completer for
// completion-complete; test_input_required_result_prompt asks the user
// for input before it renders.
func conformancePrompts() []hexmcp.Prompt {
	one := func(ms ...domain.PromptMessage) *domain.GetPromptResult {
		return &domain.GetPromptResult{Messages: ms}
	}
	return []hexmcp.Prompt{
		// prompts-list, prompts-get-simple
		hexmcp.NewPrompt("test_simple_prompt", func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
			return one(hexmcp.UserMessage(hexmcp.Text("This is a simple prompt for testing."))), nil
		}, hexmcp.WithDescription("A simple prompt without arguments.")),
		// prompts-get-with-args, completion-complete
		hexmcp.NewPrompt("test_prompt_with_arguments", func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
			return one(hexmcp.UserMessage(hexmcp.Text("Prompt with arguments: arg1='" + args["arg1"] + "', arg2='" + args["arg2"] + "'"))), nil
		}, hexmcp.WithDescription("A prompt with two required arguments."),
			hexmcp.WithArgument(domain.PromptArgument{Name: "arg1", Description: "First test argument", Required: true},
				func(_ context.Context, value string, _ map[string]string) ([]string, error) {
					var out []string
					for _, v := range []string{"paris", "park", "party", "test", "testing"} {
						if strings.HasPrefix(v, value) {
							out = append(out, v)
						}
					}
					return out, nil
				}),
			hexmcp.WithArguments(domain.PromptArgument{Name: "arg2", Description: "Second test argument", Required: true})),
		// prompts-get-embedded-resource
		hexmcp.NewPrompt("test_prompt_with_embedded_resource", func(_ context.Context, args map[string]string) (*domain.GetPromptResult, error) {
			return one(
				hexmcp.UserMessage(hexmcp.EmbeddedText(args["resourceUri"], "Embedded resource content for testing.", "text/plain")),
				hexmcp.UserMessage(hexmcp.Text("Please process the embedded resource above.")),
			), nil
		}, hexmcp.WithDescription("A prompt that embeds a resource."),
			hexmcp.WithArguments(domain.PromptArgument{Name: "resourceUri", Description: "URI of the resource to embed", Required: true})),
		// prompts-get-with-image
		hexmcp.NewPrompt("test_prompt_with_image", func(context.Context, map[string]string) (*domain.GetPromptResult, error) {
			return one(
				hexmcp.UserMessage(hexmcp.Image(redPixelPNG(), "image/png")),
				hexmcp.UserMessage(hexmcp.Text("Please analyze the image above.")),
			), nil
		}, hexmcp.WithDescription("A prompt with an image.")),
		// input-required-result-non-tool-request (input.go)
		inputPrompt(),
	}
}
