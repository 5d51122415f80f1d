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
// commit or roll back together. The transaction is begun on the store's DB(); one of another
// database is ErrUnsupportedTx. On SQLite, which writes through one connection, Send and the
// client's other writes wait while such a transaction is open, until their context's deadline,
// and then fail with ErrWriterBusy having written nothing: inside the transaction, send with
// SendTx.
//
// # Glossary
//
// The words below mean one thing each, in the code and in these docs.
//
//   - Message: one event sent to one application (Message), written once by Send with its
//     deliveries and their jobs.
//   - Delivery: one message on its way to one endpoint (Delivery): pending while attempts remain,
//     then delivered, failed (the retry schedule ran out) or cancelled.
//   - Attempt: one HTTP request of a delivery (Attempt), scheduled or manual (Resend, Recover),
//     recorded with the delivery's new state in one transaction. A try that falls due while the
//     endpoint's circuit is open is recorded as a failed attempt that was not sent.
//   - Job: the queue's unit of work (Job): make attempt N of one delivery. A Queue carries jobs
//     durably from Send to the workers; a job that runs twice makes one attempt.
//   - Lane: the queue's three kinds of job, each with workers of its own (Config.Workers): first
//     attempts, retries and manual attempts, so a backlog of retries never delays a first attempt.
//   - Snooze: a job put back for a while without counting an attempt (Snooze): the endpoint is at
//     its cap of attempts in flight, throttled, or waiting for its circuit's probe.
//   - Active place: one of a lane's places a job holds while it is busy on the CPU
//     (Config.ActiveWorkers); a job still running after a few milliseconds is waiting on a slow
//     receiver and gives its place back.
//   - Slot: one of an endpoint's cap of attempts in flight (Config.MaxInFlightPerEndpoint). On
//     a store or queue that several processes share, each process leases the slots it uses
//     from a SlotLeaser (the PostgreSQL store, the Redis queue) for Config.SlotLease, renews
//     them while it lives and gives back those it leaves idle, so the cap holds across the fleet;
//     the processes that contend for an endpoint share its cap evenly.
//   - Circuit: each process's breaker for each endpoint: Config.CircuitThreshold consecutive
//     failures open it for Config.CircuitCooldown (doubling after each failed probe, up to
//     Config.CircuitMaxCooldown); then one probe goes through, and its success closes it.
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
