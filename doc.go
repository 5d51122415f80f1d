// Package hookd sends signed, retryable outgoing webhooks.
//
// An API producer hands hookd a message for one of its customers (an application); hookd writes the
// message, one delivery per matching endpoint, and one queue job per delivery in a single
// transaction, and workers then sign each delivery, POST it, record every attempt, and retry on a
// schedule until it is accepted or the schedule runs out.
//
// # Getting started
//
// Open a store (the embedded default is one SQLite file, see package sqlite), build a Client with a
// Config, Start it, and Send:
//
//	store, err := sqlite.Open(ctx, "hookd.db", nil)
//	client, err := hookd.NewClient(store, &hookd.Config{})
//	err = client.Start(ctx)
//	defer client.Stop(ctx)
//	app, err := client.CreateApplication(ctx, &hookd.ApplicationIn{Name: "Acme", UID: "acme"})
//	ep, err := client.CreateEndpoint(ctx, app.ID, &hookd.EndpointIn{URL: "https://acme.example/hooks"})
//	msg, err := client.Send(ctx, "acme", &hookd.MessageIn{EventType: "invoice.paid", Payload: payload})
//
// # Transactions
//
// SendTx runs inside the caller's own database transaction, so "order saved" and "webhook queued"
// commit or roll back together.
//
// # Delivery
//
// The worker follows one path for every delivery: skip what is no longer pending; cancel when the
// endpoint is disabled or gone; record a failed attempt that was not sent ("circuit open: not
// sent") when the endpoint's circuit is open, so the retry schedule moves on; snooze (costing no
// attempt) while the endpoint is at its cap of attempts in flight, is throttled, or waits for its
// circuit's probe; otherwise sign with every active key, make one attempt through package
// delivery, and record the attempt, the delivery state and the endpoint's last status in one
// transaction before deciding what happens next. docs/architecture.md in the repository draws
// this path.
package hookd
