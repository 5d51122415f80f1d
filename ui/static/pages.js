// hookd's pages: copy buttons, and lists that refresh themselves while the page is open.
// Served from the pages' own origin (CSP script-src 'self'); no framework.
"use strict";

// A button with data-copy="id" copies the text of the element with that id.
document.addEventListener("click", (ev) => {
  const btn = ev.target.closest("button[data-copy]");
  if (!btn) return;
  const el = document.getElementById(btn.dataset.copy);
  if (!el) return;
  const text = el.textContent;
  const done = () => {
    btn.textContent = "Copied";
    setTimeout(() => { btn.textContent = "Copy"; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(el, done));
  } else {
    fallbackCopy(el, done);
  }
});

function fallbackCopy(el, done) {
  const range = document.createRange();
  range.selectNodeContents(el);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  try {
    if (document.execCommand("copy")) done();
  } finally {
    sel.removeAllRanges();
  }
}

// <main data-refresh="N"> reloads the page every N seconds while it is shown, keeping its
// address (and so the log's filters), unless the reader is busy with it: typing in a field, an
// open form, a text selection. The toggle pauses it.
(() => {
  const main = document.querySelector("main[data-refresh]");
  if (!main) return;
  const every = Math.max(5, Number(main.dataset.refresh) || 15) * 1000;
  const toggle = document.getElementById("auto-refresh");
  let paused = sessionStorage.getItem("hookd-refresh-paused") === "1";
  const label = () => {
    if (toggle) toggle.textContent = paused ? "Resume auto-refresh" : "Pause auto-refresh";
  };
  if (toggle) {
    toggle.hidden = false;
    label();
    toggle.addEventListener("click", () => {
      paused = !paused;
      sessionStorage.setItem("hookd-refresh-paused", paused ? "1" : "0");
      label();
    });
  }
  const busy = () => {
    const a = document.activeElement;
    if (a && a.matches("input, textarea, select")) return true;
    if (document.querySelector("details[open] form")) return true;
    const sel = window.getSelection();
    return sel && sel.toString() !== "";
  };
  setInterval(() => {
    if (paused || document.hidden || busy()) return;
    window.location.replace(window.location.href);
  }, every);
})();
