// Messages to the user: API errors (with the API's own `message`), confirmations of what
// an action did, and the confirm dialog of destructive actions.

import { h } from "./dom.js";

const INFO_MS = 6000;

function region() {
  return document.getElementById("notices");
}

function post(kind, text, detail) {
  const list = region();
  // The same error from every refresh is shown once, not stacked; a new confirmation
  // replaces the last one.
  for (const existing of [...list.children]) {
    if (existing.dataset.text === text) return existing;
    if (kind === "info" && existing.classList.contains("info")) existing.remove();
  }
  const notice = h(
    "div",
    { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status", dataset: { text } },
    h("span", { class: "text" }, text),
    detail ? h("span", { class: "detail" }, detail) : null,
    h("button", { type: "button", class: "close", "aria-label": "Dismiss", onclick: () => notice.remove() }, "×"),
  );
  list.append(notice);
  if (kind === "info") setTimeout(() => notice.remove(), INFO_MS);
  return notice;
}

/** Show an error; an ApiError shows the API's message and which request failed. */
export function showError(err) {
  const where = err && err.method ? `${err.method} ${err.path}${err.status ? ` → ${err.status}` : ""}` : null;
  return post("error", err && err.message ? err.message : String(err), where);
}

export function showInfo(text) {
  return post("info", text, null);
}

/** Remove the error notices (e.g. after the failing request succeeded). */
export function clearErrors(matching = () => true) {
  for (const notice of [...region().querySelectorAll(".notice.error")]) {
    if (matching(notice.dataset.text)) notice.remove();
  }
}

/** Ask before doing something that cannot be undone; resolves true when confirmed. */
export function confirmAction(message, action = "OK") {
  const dialog = document.getElementById("confirm");
  dialog.querySelector(".message").textContent = message;
  dialog.querySelector("button[value=ok]").textContent = action;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}
