// Java .properties text, as Kafka's connector files are written: comments (# or !),
// key=value, key:value or key value, backslash line continuations and escapes
// (\t \n \r \f \uXXXX, and \x for any other x).

export class PropertiesError extends Error {
  constructor(line, message) {
    super(`properties line ${line}: ${message}`);
    this.name = "PropertiesError";
  }
}

function unescape(text, line) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "\\") {
      out += c;
      continue;
    }
    const next = text[++i];
    if (next === "u") {
      const hex = text.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new PropertiesError(line, `malformed \\u escape '\\u${hex}'`);
      out += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else {
      out += { t: "\t", n: "\n", r: "\r", f: "\f" }[next] ?? next ?? "";
    }
  }
  return out;
}

function endsWithContinuation(line) {
  let slashes = 0;
  for (let i = line.length - 1; i >= 0 && line[i] === "\\"; i--) slashes++;
  return slashes % 2 === 1;
}

/** Parse properties text into a plain object (later keys win, as in Java). */
export function parseProperties(text) {
  const result = {};
  const lines = text.split(/\r\n|\r|\n/);
  for (let n = 0; n < lines.length; n++) {
    const first = n + 1;
    let logical = lines[n].replace(/^[ \t\f]+/, "");
    if (!logical || logical[0] === "#" || logical[0] === "!") continue;
    while (endsWithContinuation(logical) && n + 1 < lines.length) {
      logical = logical.slice(0, -1) + lines[++n].replace(/^[ \t\f]+/, "");
    }
    if (endsWithContinuation(logical)) logical = logical.slice(0, -1);
    let i = 0;
    while (i < logical.length && !"=: \t\f".includes(logical[i])) i += logical[i] === "\\" ? 2 : 1;
    const key = unescape(logical.slice(0, i), first);
    while (i < logical.length && " \t\f".includes(logical[i])) i++;
    if (logical[i] === "=" || logical[i] === ":") i++;
    while (i < logical.length && " \t\f".includes(logical[i])) i++;
    result[key] = unescape(logical.slice(i), first);
  }
  return result;
}

function escape(text, isKey) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") out += "\\\\";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (c === "\f") out += "\\f";
    // In a key these would end it or start a comment; a value's leading space would be trimmed.
    else if ((isKey && "=: #!".includes(c)) || (!isKey && i === 0 && c === " ")) out += `\\${c}`;
    else out += c;
  }
  return out;
}

/** Properties text of an object, one key=value per line, in the object's order. */
export function formatProperties(values) {
  return Object.entries(values)
    .map(([k, v]) => `${escape(k, true)}=${escape(String(v), false)}`)
    .join("\n");
}
