// Drives a running `hookd serve` with the official Svix npm SDK (svix 2.5.0), the current API
// generation: eventTypes and throttleRate. Usage: node walk.mjs <server-url> <admin-token>
// Deliveries land at a receiver on 127.0.0.1 that verifies them with the SDK's own Webhook class.
import http from "node:http";
import { Svix, Webhook } from "svix";

const [serverUrl, token] = process.argv.slice(2);
if (!serverUrl || !token) {
  console.error("usage: node walk.mjs <server-url> <admin-token>");
  process.exit(2);
}
const svix = new Svix(token, { serverUrl });

let passed = 0;
let failed = 0;
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err?.stack ?? err}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// The receiver: records every request with its verification against the current secrets.
const received = [];
let secrets = [];
const receiver = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const verified = secrets.some((s) => {
      try {
        new Webhook(s).verify(body, req.headers);
        return true;
      } catch {
        return false;
      }
    });
    received.push({ body, headers: req.headers, verified });
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const hookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;

async function waitFor(n) {
  const deadline = Date.now() + 15000;
  while (received.length < n) {
    if (Date.now() > deadline) throw new Error(`receiver got ${received.length} requests, want ${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let app, ep, msg;
const suffix = Date.now().toString(36);

await step("application.create with uid and throttleRate", async () => {
  app = await svix.application.create({ name: "npm walk", uid: `npm-walk-${suffix}`, throttleRate: 100 });
  assert(app.id.startsWith("app_"), `id ${app.id}`);
  assert(app.throttleRate === 100, `throttleRate ${app.throttleRate}`);
});
await step("application.get by uid", async () => {
  const got = await svix.application.get(`npm-walk-${suffix}`);
  assert(got.id === app.id, `got ${got.id}`);
});
await step("eventType.create", async () => {
  const et = await svix.eventType.create({ name: `invoice.paid.${suffix}`, description: "An invoice was paid" });
  assert(et.name === `invoice.paid.${suffix}`, et.name);
});
await step("endpoint.create with eventTypes and throttleRate", async () => {
  ep = await svix.endpoint.create(app.id, { url: hookUrl, eventTypes: [`invoice.paid.${suffix}`], throttleRate: 50 });
  assert(ep.url === hookUrl, ep.url);
  assert(Array.isArray(ep.eventTypes) && ep.eventTypes[0] === `invoice.paid.${suffix}`, JSON.stringify(ep.eventTypes));
  assert(ep.throttleRate === 50, `throttleRate ${ep.throttleRate}`);
});
await step("endpoint.getSecret", async () => {
  const s = await svix.endpoint.getSecret(app.id, ep.id);
  assert(s.key.startsWith("whsec_"), "key prefix");
  secrets = [s.key];
});
await step("message.create delivers a verified webhook", async () => {
  msg = await svix.message.create(app.id, { eventType: `invoice.paid.${suffix}`, eventId: `evt-${suffix}`, payload: { invoice: "in_1", amount: 4200 } });
  assert(msg.id.startsWith("msg_"), msg.id);
  await waitFor(1);
  assert(received[0].verified, "signature did not verify");
  assert(received[0].headers["webhook-id"] === msg.id || received[0].headers["svix-id"] === msg.id, "webhook-id is the message id");
});
await step("message.create with a taken eventId is 409", async () => {
  try {
    await svix.message.create(app.id, { eventType: `invoice.paid.${suffix}`, eventId: `evt-${suffix}`, payload: {} });
    throw new Error("no error");
  } catch (err) {
    assert(err.code === 409, `code ${err.code}: ${err}`);
  }
});
await step("message.get and message.list", async () => {
  const got = await svix.message.get(app.id, msg.id);
  assert(got.eventType === `invoice.paid.${suffix}`, got.eventType);
  const list = await svix.message.list(app.id, { limit: 10 });
  assert(list.data.length === 1 && list.done === true, JSON.stringify(list));
});
await step("messageAttempt.listByMsg", async () => {
  const deadline = Date.now() + 5000;
  let attempts;
  do {
    attempts = await svix.messageAttempt.listByMsg(app.id, msg.id);
  } while (attempts.data.length === 0 && Date.now() < deadline);
  assert(attempts.data.length === 1, `attempts ${attempts.data.length}`);
  assert(attempts.data[0].responseStatusCode === 200, `status ${attempts.data[0].responseStatusCode}`);
});
await step("messageAttempt.listAttemptedDestinations", async () => {
  const d = await svix.messageAttempt.listAttemptedDestinations(app.id, msg.id);
  assert(d.data.length === 1 && d.data[0].id === ep.id, JSON.stringify(d.data));
});
await step("messageAttempt.resend", async () => {
  await svix.messageAttempt.resend(app.id, msg.id, ep.id);
  await waitFor(2);
  assert(received[1].verified, "resent webhook did not verify");
});
await step("endpoint headers", async () => {
  await svix.endpoint.setHeaders(app.id, ep.id, { headers: { "X-Tenant": "acme" } });
  await svix.endpoint.patchHeaders(app.id, ep.id, { headers: { "X-Region": "eu" } });
  const h = await svix.endpoint.getHeaders(app.id, ep.id);
  assert(h.headers["X-Tenant"] === "acme" && h.headers["X-Region"] === "eu", JSON.stringify(h));
});
await step("endpoint.rotateSecret: the next webhook verifies with the new secret", async () => {
  const old = secrets[0];
  await svix.endpoint.rotateSecret(app.id, ep.id, {});
  const s = await svix.endpoint.getSecret(app.id, ep.id);
  assert(s.key !== old, "secret unchanged");
  secrets = [s.key];
  await svix.message.create(app.id, { eventType: `invoice.paid.${suffix}`, payload: { n: 2 } });
  await waitFor(3);
  assert(received[2].verified, "did not verify with the new secret");
  assert(received[2].headers["x-tenant"] === "acme", "custom header missing");
});
await step("endpoint.getStats", async () => {
  const st = await svix.endpoint.getStats(app.id, ep.id);
  assert(typeof st.success === "number" && st.success >= 2, JSON.stringify(st));
});
await step("endpoint.list and application.list", async () => {
  const eps = await svix.endpoint.list(app.id);
  assert(eps.data.length === 1, `endpoints ${eps.data.length}`);
  const apps = await svix.application.list({ limit: 250 });
  assert(apps.data.some((a) => a.id === app.id), "app not listed");
});
await step("endpoint.delete and application.delete", async () => {
  await svix.endpoint.delete(app.id, ep.id);
  await svix.application.delete(app.id);
  try {
    await svix.application.get(app.id);
    throw new Error("still there");
  } catch (err) {
    assert(err.code === 404, `code ${err.code}`);
  }
});

receiver.close();
console.log(`svix-npm: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
