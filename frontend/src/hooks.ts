import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";

export type Async<T> =
  | { state: "loading"; data?: undefined; error?: undefined }
  | { state: "error"; data?: undefined; error: Error }
  | { state: "ready"; data: T; error?: undefined };

/**
 * Run `load` when `deps` change; give loading / error / ready and a reload function. A reload
 * keeps showing the previous data (no flash of "loading"). Results of superseded runs are dropped.
 */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Async<T> & { reload: () => void } {
  const [result, setResult] = useState<Async<T>>({ state: "loading" });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    loadRef
      .current(ctl.signal)
      .then((data) => !ctl.signal.aborted && setResult({ state: "ready", data }))
      .catch((e: unknown) => {
        if (ctl.signal.aborted) return;
        setResult({ state: "error", error: e instanceof Error ? e : new Error(String(e)) });
      });
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...result, reload };
}

/**
 * The content width of an element, kept current with a ResizeObserver. 0 until measured (before
 * the first layout effect), so charts draw once at the real width rather than twice; `fallback`
 * when the element has no layout (jsdom).
 */
export function useWidth<E extends HTMLElement>(fallback = 640): [React.RefObject<E | null>, number] {
  const ref = useRef<E>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      const w = Math.floor(el.getBoundingClientRect().width);
      setWidth(w > 0 ? w : fallback);
    };
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [fallback]);
  return [ref, width];
}

/** A value that follows `value` after it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const id = setTimeout(() => setV(value), ms);
    return () => clearTimeout(id);
  }, [value, ms]);
  return v;
}
