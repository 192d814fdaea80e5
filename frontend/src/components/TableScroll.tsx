import { useId, useLayoutEffect, useRef, useState, type ReactNode } from "react";

/**
 * A table that scrolls sideways inside its card when it is wider than the screen (390 px phones),
 * with a cue that it does: a fade on the edge that hides columns, and a line saying so that the
 * scroll region names as its description for screen readers. Without it a phone showed the servers
 * table cut at "Memory" with nothing saying more columns followed.
 */
export function TableScroll({ label, children }: { label?: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [more, setMore] = useState({ left: false, right: false });
  const hint = useId();
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const update = () => {
      const left = el.scrollLeft > 1;
      const right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1;
      setMore((m) => (m.left === left && m.right === right ? m : { left, right }));
    };
    update();
    el.addEventListener("scroll", update, { passive: true });
    window.addEventListener("resize", update);
    const ro = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(update);
    ro?.observe(el);
    if (el.firstElementChild) ro?.observe(el.firstElementChild);
    return () => {
      el.removeEventListener("scroll", update);
      window.removeEventListener("resize", update);
      ro?.disconnect();
    };
  }, []);
  const scrolls = more.left || more.right;
  return (
    <div className="table-scroll" data-more-left={more.left || undefined} data-more-right={more.right || undefined}>
      <div
        ref={box}
        className="table-wrap"
        // a region that scrolls must be reachable by keyboard to be scrolled without a pointer
        tabIndex={label || scrolls ? 0 : undefined}
        role={label || scrolls ? "region" : undefined}
        aria-label={label ?? (scrolls ? "table" : undefined)}
        aria-describedby={scrolls ? hint : undefined}
      >
        {children}
      </div>
      {scrolls && (
        <p id={hint} className="scroll-hint" data-testid="scroll-hint">
          {more.right ? "More columns to the right: scroll sideways" : "More columns to the left: scroll back"}
        </p>
      )}
    </div>
  );
}
