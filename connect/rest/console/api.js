// The worker's REST API as the console uses it: Kafka Connect's paths, /metrics, and the
// /sluiceway/topics and /sluiceway/schemas extensions. Every failure becomes an ApiError carrying the API's own
// `message` (Kafka Connect's error body {"error_code": N, "message": "..."}).

/** A request the API refused, or one that never got an answer. */
export class ApiError extends Error {
  constructor(message, status = 0, method = "", path = "") {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.method = method;
    this.path = path;
  }
}

const seg = encodeURIComponent;

/** Send a request; resolves to the parsed JSON body (null when there is none). */
export async function request(method, path, body = undefined) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(`${method} ${path}: the worker did not answer (${err.message})`, 0, method, path);
  }
  const text = await response.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!response.ok) {
    const message =
      parsed && typeof parsed === "object" && parsed.message ? parsed.message : text || response.statusText;
    throw new ApiError(message, response.status, method, path);
  }
  return parsed;
}

/** Raw text of a GET (the Prometheus exposition at /metrics). */
export async function text(path) {
  let response;
  try {
    response = await fetch(path, { headers: { Accept: "text/plain" } });
  } catch (err) {
    throw new ApiError(`GET ${path}: the worker did not answer (${err.message})`, 0, "GET", path);
  }
  const body = await response.text();
  if (!response.ok) {
    let message = body || response.statusText;
    try {
      message = JSON.parse(body).message || message;
    } catch {
      // not JSON: keep the text
    }
    throw new ApiError(message, response.status, "GET", path);
  }
  return body;
}

export const api = {
  connectors: () => request("GET", "/connectors?expand=status&expand=info"),
  config: (name) => request("GET", `/connectors/${seg(name)}/config`),
  create: (name, config) => request("POST", "/connectors", { name, config }),
  saveConfig: (name, config) => request("PUT", `/connectors/${seg(name)}/config`, config),
  pause: (name) => request("PUT", `/connectors/${seg(name)}/pause`),
  resume: (name) => request("PUT", `/connectors/${seg(name)}/resume`),
  stop: (name) => request("PUT", `/connectors/${seg(name)}/stop`),
  restart: (name) => request("POST", `/connectors/${seg(name)}/restart?includeTasks=true&onlyFailed=false`),
  restartTask: (name, task) => request("POST", `/connectors/${seg(name)}/tasks/${seg(task)}/restart`),
  remove: (name) => request("DELETE", `/connectors/${seg(name)}`),
  plugins: () => request("GET", "/connector-plugins"),
  pluginConfig: (plugin) => request("GET", `/connector-plugins/${seg(plugin)}/config`),
  validate: (plugin, config) => request("PUT", `/connector-plugins/${seg(plugin)}/config/validate`, config),
  topics: () => request("GET", "/sluiceway/topics"),
  topic: (name) => request("GET", `/sluiceway/topics/${seg(name)}`),
  schemas: () => request("GET", "/sluiceway/schemas"),
  schema: (subject) => request("GET", `/sluiceway/schemas/${seg(subject)}`),
  loggers: () => request("GET", "/admin/loggers"),
  setLogger: (name, level) => request("PUT", `/admin/loggers/${seg(name)}`, { level }),
  metrics: () => text("/metrics"),
};
