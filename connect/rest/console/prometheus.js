// Prometheus text exposition format (version 0.0.4), the format of the worker's /metrics:
//
//   # HELP name help text
//   # TYPE name counter
//   name{label="value",other="x"} 12.0 [timestamp]
//
// Label values escape backslash, double quote and newline (\\ \" \n). Values are Go-style
// floats, including NaN, +Inf and -Inf. Comments other than HELP/TYPE are ignored, as is a
// trailing "# EOF" (OpenMetrics).

/** A line the parser cannot read: names the line number and what is wrong. */
export class ExpositionError extends Error {
  constructor(line, message) {
    super(`/metrics line ${line}: ${message}`);
    this.name = "ExpositionError";
  }
}

const NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL = /[a-zA-Z_][a-zA-Z0-9_]*/y;

function parseValue(raw, line) {
  if (raw === "NaN") return NaN;
  if (raw === "+Inf" || raw === "Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  const value = Number(raw);
  if (raw === "" || Number.isNaN(value)) throw new ExpositionError(line, `'${raw}' is not a number`);
  return value;
}

function parseLabels(text, start, line) {
  // text[start] is "{"; returns [labels, index after "}"].
  const labels = {};
  let i = start + 1;
  for (;;) {
    while (text[i] === " ") i++;
    if (text[i] === "}") return [labels, i + 1];
    LABEL.lastIndex = i;
    const match = LABEL.exec(text);
    if (!match) throw new ExpositionError(line, `expected a label name at column ${i + 1}`);
    i += match[0].length;
    while (text[i] === " ") i++;
    if (text[i] !== "=") throw new ExpositionError(line, `expected '=' after label ${match[0]}`);
    i++;
    while (text[i] === " ") i++;
    if (text[i] !== '"') throw new ExpositionError(line, `expected '"' to open the value of label ${match[0]}`);
    i++;
    let value = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new ExpositionError(line, `unterminated value of label ${match[0]}`);
      if (c === '"') break;
      if (c === "\\") {
        const next = text[i + 1];
        value += next === "n" ? "\n" : next;
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    labels[match[0]] = value;
    i++;
    while (text[i] === " ") i++;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new ExpositionError(line, `expected ',' or '}' after label ${match[0]}`);
  }
}

/**
 * Parse an exposition; returns {samples: [{name, labels, value}], types: {family: type}, help: {family: text}}.
 * Throws ExpositionError naming the line of the first sample it cannot read.
 */
export function parseExposition(text) {
  const samples = [];
  const types = {};
  const help = {};
  const lines = text.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].replace(/\r$/, "");
    const trimmed = line.trim();
    if (!trimmed) continue;
    if (trimmed.startsWith("#")) {
      const parts = trimmed.split(/\s+/);
      if (parts[1] === "TYPE" && parts.length >= 4) types[parts[2]] = parts[3];
      else if (parts[1] === "HELP" && parts.length >= 3) help[parts[2]] = parts.slice(3).join(" ");
      continue;
    }
    NAME.lastIndex = 0;
    const name = NAME.exec(trimmed);
    if (!name) throw new ExpositionError(n + 1, "expected a metric name");
    let i = name[0].length;
    let labels = {};
    if (trimmed[i] === "{") [labels, i] = parseLabels(trimmed, i, n + 1);
    const rest = trimmed.slice(i).trim().split(/\s+/);
    if (rest.length < 1 || rest[0] === "") throw new ExpositionError(n + 1, `no value for ${name[0]}`);
    samples.push({ name: name[0], labels, value: parseValue(rest[0], n + 1) });
  }
  return { samples, types, help };
}
