// The one place that talks HTTP to /api/v1. Browser sessions use the HttpOnly session cookie the
// backend sets; unsafe methods echo the readable CSRF cookie in X-CSRF-Token (double submit).

export class ApiError extends Error {
  readonly status: number;
  readonly detail: unknown;
  constructor(status: number, message: string, detail?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.detail = detail;
  }
}

export const API_BASE = "/api/v1";

/** Cookie names the backend may use for the CSRF token; the first present wins. */
const CSRF_COOKIES = ["hitcurve_csrf", "csrf_token", "csrftoken", "csrf"];

export function readCsrfToken(cookie: string = typeof document === "undefined" ? "" : document.cookie): string | null {
  const jar = new Map<string, string>();
  for (const part of cookie.split(";")) {
    const i = part.indexOf("=");
    if (i > 0) jar.set(part.slice(0, i).trim(), decodeURIComponent(part.slice(i + 1).trim()));
  }
  for (const name of CSRF_COOKIES) if (jar.get(name)) return jar.get(name)!;
  for (const [k, v] of jar) if (/csrf/i.test(k) && v) return v;
  return null;
}

/** Forget the CSRF cookie the dashboard read as `token` (a session the server ended): only while it
 *  still holds that value, since a session set meanwhile (a mailed link) brings its own. */
export function forgetCsrfToken(token: string): void {
  if (readCsrfToken() === token) document.cookie = `${CSRF_COOKIES[0]}=; Max-Age=0; path=/; SameSite=Lax`;
}

/** FastAPI errors come as {detail: string} or {detail: [{msg, loc}]}: make one readable line. */
export function errorMessage(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { msg?: string; loc?: unknown[] }) =>
        [Array.isArray(d.loc) ? d.loc.filter((x) => x !== "body").join(".") : "", d.msg ?? ""].filter(Boolean).join(": "),
      )
      .join("; ");
  }
  if (status === 401) return "Please log in.";
  if (status === 404) return "Not found.";
  if (status >= 500) return `The service failed (HTTP ${status}). Try again in a moment.`;
  return `Request failed (HTTP ${status}).`;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Listeners told when any request answers 401 (the session ended): the shell shows log-in. */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export async function request<T>(method: Method, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method !== "GET") {
    const token = readCsrfToken();
    if (token) headers["X-CSRF-Token"] = token;
  }
  let res: Response;
  try {
    res = await fetch(API_BASE + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
  } catch (e) {
    if ((e as { name?: string }).name === "AbortError") throw e;
    throw new ApiError(0, "Cannot reach the service. Check your connection and try again.");
  }
  const text = res.status === 204 ? "" : await res.text();
  let data: unknown = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    // "/auth/me" is the start-up probe, not a session that ended: its caller handles its 401 (a
    // late probe must not log out a session a mailed link set meanwhile)
    if (res.status === 401 && !path.startsWith("/auth/login") && path !== "/auth/me") unauthorizedListeners.forEach((fn) => fn());
    throw new ApiError(res.status, errorMessage(res.status, data), data);
  }
  return data as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => request<T>("GET", path, undefined, signal);
export const post = <T>(path: string, body?: unknown) => request<T>("POST", path, body ?? {});
export const patch = <T>(path: string, body: unknown) => request<T>("PATCH", path, body);
export const put = <T>(path: string, body: unknown) => request<T>("PUT", path, body);
export const del = <T>(path: string) => request<T>("DELETE", path);

/** Query string from defined values only. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}
