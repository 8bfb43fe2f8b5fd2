// Building DOM nodes from data. Text always goes in through textContent (never innerHTML),
// so connector names, configs and traces cannot inject markup.

/**
 * Create an element: h("button", {class: "x", onclick: fn, dataset: {k: "v"}}, "text", child...).
 * Attributes named on* become listeners; `false`/`null`/`undefined` attributes are left out;
 * children may be strings, numbers, nodes, arrays of them, or null (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value" && "value" in el) {
      el.value = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element (charts). */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) if (child) el.append(child);
  return el;
}

/** Replace everything inside `el` with `children`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** "3.2", "45", "1.2k" records per second. */
export function formatRate(value) {
  if (value >= 10000) return `${(value / 1000).toFixed(0)}k`;
  if (value >= 1000) return `${(value / 1000).toFixed(1)}k`;
  if (value >= 10) return value.toFixed(0);
  return value.toFixed(1);
}

/** A state badge: RUNNING, PAUSED, FAILED, ... */
export function badge(state) {
  return h("span", { class: `badge state-${String(state).toLowerCase()}` }, state);
}
