// Drives a running `hookd serve` with the official Svix npm SDKs, svix 2.5.0 (today's API
// generation: eventTypes, throttleRate) and svix 1.99.1 (the last 1.x: filterTypes beside
// throttleRate), and checks real deliveries with the receiver libraries people use: svix's
// Webhook, standardwebhooks, @clerk/backend's verifyWebhook, resend's webhooks.verify, openai's
// webhooks.unwrap, and stripe's webhooks.constructEvent on an endpoint of hookd's stripe scheme.
// Usage: node walk.mjs <server-url> <admin-token>
// Deliveries land at a receiver on 127.0.0.1, in this process.
import http from "node:http";
import { Svix, Webhook } from "svix";
import { Svix as Svix1, Webhook as Webhook1 } from "svix1";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { verifyWebhook as clerkVerifyWebhook } from "@clerk/backend/webhooks";
import { Resend } from "resend";
import OpenAI from "openai";
import Stripe from "stripe";

const [serverUrl, token] = process.argv.slice(2);
if (!serverUrl || !token) {
  console.error("usage: node walk.mjs <server-url> <admin-token>");
  process.exit(2);
}
const svix = new Svix(token, { serverUrl });
const svix1 = new Svix1(token, { serverUrl });

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

// api calls hookd's HTTP API directly, for hookd's own fields the SDKs do not know (scheme).
async function api(method, path, body) {
  const res = await fetch(serverUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

// The receiver: records every request; those to /hook with their verification against the
// current secrets, in received, and every request by path, in byPath.
const received = [];
const byPath = {};
let secrets = [];
const receiver = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const path = new URL(req.url, "http://x").pathname;
    (byPath[path] ??= []).push({ body, headers: req.headers });
    if (path === "/hook") {
      const verified = secrets.some((s) => {
        try {
          new Webhook(s).verify(body, req.headers);
          return true;
        } catch {
          return false;
        }
      });
      received.push({ body, headers: req.headers, verified });
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;
const hookUrl = `${receiverUrl}/hook`;

async function waitFor(n) {
  const deadline = Date.now() + 15000;
  while (received.length < n) {
    if (Date.now() > deadline) throw new Error(`receiver got ${received.length} requests, want ${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// waitPath waits for the first request to path and returns it.
async function waitPath(path) {
  const deadline = Date.now() + 15000;
  while (!byPath[path]?.length) {
    if (Date.now() > deadline) throw new Error(`receiver got no request at ${path}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return byPath[path][0];
}

// only returns the headers of h named in names, so that a library cannot fall back on others.
function only(h, ...names) {
  return Object.fromEntries(names.filter((n) => h[n] !== undefined).map((n) => [n, h[n]]));
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

// One delivery, checked with each receiver library people use, each given what its documentation
// says to give it.
let libs = {};
await step("a delivery for the receiver libraries", async () => {
  const a = await svix.application.create({ name: "npm libraries", uid: `npm-libs-${suffix}` });
  const e = await svix.endpoint.create(a.id, { url: `${receiverUrl}/libs` });
  const s = await svix.endpoint.getSecret(a.id, e.id);
  const m = await svix.message.create(a.id, { eventType: "user.created", payload: { type: "user.created", data: { id: "user_1" } } });
  const r = await waitPath("/libs");
  libs = { app: a, secret: s.key, msg: m, ...r };
  assert(r.headers["svix-id"] === m.id && r.headers["webhook-id"] === m.id, `ids ${r.headers["svix-id"]} ${r.headers["webhook-id"]}`);
});
await step("svix 2.5.0 Webhook.verify with svix-* alone", async () => {
  new Webhook(libs.secret).verify(libs.body, only(libs.headers, "svix-id", "svix-timestamp", "svix-signature"));
});
await step("svix 1.99.1 Webhook.verify with webhook-* alone", async () => {
  new Webhook1(libs.secret).verify(libs.body, only(libs.headers, "webhook-id", "webhook-timestamp", "webhook-signature"));
});
await step("standardwebhooks Webhook.verify", async () => {
  const got = new StandardWebhook(libs.secret).verify(libs.body, only(libs.headers, "webhook-id", "webhook-timestamp", "webhook-signature"));
  assert(got.data.id === "user_1", JSON.stringify(got));
});
await step("@clerk/backend verifyWebhook(Request)", async () => {
  const req = new Request(`${receiverUrl}/libs`, { method: "POST", headers: libs.headers, body: libs.body });
  const evt = await clerkVerifyWebhook(req, { signingSecret: libs.secret });
  assert(evt.type === "user.created" && evt.data.id === "user_1", JSON.stringify(evt));
});
await step("resend webhooks.verify fed svix-id, svix-timestamp, svix-signature", async () => {
  const resend = new Resend("re_hookd_walk");
  const got = resend.webhooks.verify({
    payload: libs.body,
    headers: { id: libs.headers["svix-id"], timestamp: libs.headers["svix-timestamp"], signature: libs.headers["svix-signature"] },
    webhookSecret: libs.secret,
  });
  assert(got.data.id === "user_1", JSON.stringify(got));
});
await step("openai webhooks.unwrap (webhook-*)", async () => {
  const openai = new OpenAI({ apiKey: "sk-hookd-walk" });
  const got = await openai.webhooks.unwrap(libs.body, libs.headers, libs.secret);
  assert(got.data.id === "user_1", JSON.stringify(got));
});

await step("stripe webhooks.constructEvent on a stripe-scheme endpoint made through the API", async () => {
  const a = await svix.application.create({ name: "npm stripe", uid: `npm-stripe-${suffix}` });
  const e = await api("POST", `/api/v1/app/${a.id}/endpoint`, { url: `${receiverUrl}/stripe`, scheme: "stripe" });
  assert(e.scheme === "stripe", `scheme ${e.scheme}`);
  const got = await svix.endpoint.get(a.id, e.id);
  assert(got.url === `${receiverUrl}/stripe`, got.url);
  const s = await svix.endpoint.getSecret(a.id, e.id);
  await svix.message.create(a.id, { eventType: "invoice.paid", payload: { id: "evt_1", object: "event", type: "invoice.paid" } });
  const r = await waitPath("/stripe");
  const stripe = new Stripe("sk_test_hookd_walk");
  // The secret exactly as hookd gives it, whsec_ included: Stripe keys its HMAC with the string.
  const evt = stripe.webhooks.constructEvent(r.body, r.headers["stripe-signature"], s.key);
  assert(evt.type === "invoice.paid" && evt.id === "evt_1", JSON.stringify(evt));
  assert(r.headers["svix-signature"] === undefined && r.headers["webhook-signature"] === undefined, "Standard Webhooks headers on a stripe delivery");
  await svix.application.delete(a.id);
});

// Read-modify-write, as an app does: get the endpoint, change its URL, update with what get
// returned. The filter must stay; it is read back through today's SDK.
// put is the SDK's PUT: update in 1.x, upsert in 2.x.
async function readModifyWrite(name, sdk, filterField, put) {
  await step(`${name}: endpoint get, change url, update with what get returned; the filter stays`, async () => {
    const a = await sdk.application.create({ name: `npm rmw ${name}`, uid: `npm-rmw-${name.replace(/\W/g, "")}-${suffix}` });
    const et = `rmw.${name.replace(/\W/g, "")}.${suffix}`;
    await sdk.eventType.create({ name: et, description: "read-modify-write" });
    const created = await sdk.endpoint.create(a.id, { url: `${receiverUrl}/rmw-a`, [filterField]: [et] });
    const got = await sdk.endpoint.get(a.id, created.id);
    const problems = [];
    if (JSON.stringify(got[filterField]) !== JSON.stringify([et])) problems.push(`get shows ${filterField} ${JSON.stringify(got[filterField])}`);
    got.url = `${receiverUrl}/rmw-b`;
    const updated = await sdk.endpoint[put](a.id, created.id, got);
    if (updated.url !== `${receiverUrl}/rmw-b`) problems.push(`updated url ${updated.url}`);
    const stored = await svix.endpoint.get(a.id, created.id);
    if (JSON.stringify(stored.eventTypes) !== JSON.stringify([et])) problems.push(`stored eventTypes after the update ${JSON.stringify(stored.eventTypes)}`);
    await sdk.application.delete(a.id);
    assert(problems.length === 0, problems.join("; "));
  });
}
await readModifyWrite("svix 2.5.0", svix, "eventTypes", "upsert");
await readModifyWrite("svix 1.99.1", svix1, "filterTypes", "update");

await svix.application.delete(libs.app?.id ?? "none").catch(() => {});
receiver.close();
console.log(`svix-npm: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
