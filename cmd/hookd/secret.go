package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hookd/hookd/signature"
)

// runSecret handles "hookd secret new [--ed25519] [--json]".
func runSecret(_ context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "new" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprint(e.stdout, "Usage: hookd secret new [--ed25519] [--json]\n\nPrints a fresh signing secret: whsec_ (HMAC-SHA256, the default) or,\nwith --ed25519, a whsk_ secret key and its whpk_ public key.\n")
			return nil
		}
		return usageErrorf(`run "hookd secret new" (or "hookd secret new --ed25519")`, "secret: missing or unknown subcommand")
	}
	f := newFlags(e, "secret new", "secret new [--ed25519] [--json]")
	ed := f.Bool("ed25519", false, "generate an ed25519 key pair (whsk_ secret, whpk_ public) for v1a signatures")
	asJSON := f.Bool("json", false, "print JSON instead of text")
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	out := map[string]string{}
	if *ed {
		secret, public, err := signature.NewKeyPair()
		if err != nil {
			return failf("", "generate key pair: %v", err)
		}
		out["secret"], out["public"] = secret, public
	} else {
		out["secret"] = signature.NewSecret()
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		return enc.Encode(out)
	}
	if *ed {
		fmt.Fprintf(e.stdout, "secret: %s\npublic: %s\n", out["secret"], out["public"])
		return nil
	}
	fmt.Fprintln(e.stdout, out["secret"])
	return nil
}
