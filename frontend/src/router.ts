// A tiny router: the path is the state. Links push history entries; components subscribe with
// useRoute(). Routes are matched by patterns like "/servers/:id/history".
import { useSyncExternalStore } from "react";

const listeners = new Set<() => void>();
function notify() {
  listeners.forEach((fn) => fn());
}
if (typeof window !== "undefined") window.addEventListener("popstate", notify);

function subscribe(fn: () => void) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
const snapshot = () => window.location.pathname + window.location.search;

export function useLocation(): string {
  return useSyncExternalStore(subscribe, snapshot, () => "/");
}

export function navigate(to: string, replace = false) {
  if (to === snapshot()) return;
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  window.scrollTo?.(0, 0);
  notify();
}

/** Match "/servers/:id" against "/servers/42": {id: "42"}, or null. Query strings are ignored. */
export function matchPath(pattern: string, location: string): Record<string, string> | null {
  const path = location.split("?")[0].replace(/\/+$/, "") || "/";
  const ps = pattern.split("/").filter(Boolean);
  const ls = path.split("/").filter(Boolean);
  if (ps.length !== ls.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < ps.length; i++) {
    if (ps[i].startsWith(":")) params[ps[i].slice(1)] = decodeURIComponent(ls[i]);
    else if (ps[i] !== ls[i]) return null;
  }
  return params;
}

export function queryParam(location: string, name: string): string | null {
  const i = location.indexOf("?");
  return i < 0 ? null : new URLSearchParams(location.slice(i + 1)).get(name);
}
