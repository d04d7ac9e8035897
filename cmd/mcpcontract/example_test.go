package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
)

// Write the lock of a server, then check a later version of it: the
// command's own test binary serves a small user service over stdio, first
// as version v1, then as a version whose changes break its clients.
func Example() {
	dir, err := os.MkdirTemp("", "mcpcontract")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(dir); err != nil {
		log.Fatal(err)
	}
	server, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	os.Setenv(serveEnv, "v1")
	fmt.Println("write: exit", run(ctx, []string{"write", "-o", "tools.lock.json", "--", server}, io.Discard, io.Discard))

	os.Setenv(serveEnv, "breaking")
	defer os.Unsetenv(serveEnv)
	fmt.Println("check: exit", run(ctx, []string{"check", "tools.lock.json", "--", server}, os.Stdout, io.Discard))
	// Output:
	// write: exit 0
	// BREAKING tool "createUser" /inputSchema/properties/age/maximum: bound tightened (maximum 150 → 120)
	// BREAKING tool "createUser" /inputSchema/properties/role/enum: value "member" removed
	// BREAKING tool "createUser" /inputSchema/required: new required parameter "email"
	// BREAKING tool "createUser" /outputSchema/required: property "id" may now be absent
	// BREAKING tool "deleteUser" /: tool removed
	// BREAKING tool "getUser" /annotations/readOnlyHint: no longer read-only (readOnlyHint true → false)
	// BREAKING prompt "greet" /arguments/lang: new required argument "lang"
	// BREAKING resource "config://app" /mimeType: MIME type changed from "application/json" to "text/plain"
	// tools.lock.json: 8 breaking, 0 compatible
	// check: exit 1
}
