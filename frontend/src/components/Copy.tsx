import { useState } from "react";

/** A block of text with a Copy button (falls back to selecting the text). */
export function CopyBlock({ text, label, testId }: { text: string; label: string; testId?: string }) {
  const [done, setDone] = useState<"" | "copied" | "select">("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone("copied");
    } catch {
      setDone("select");
    }
    setTimeout(() => setDone(""), 2000);
  };
  return (
    <div className="copy-block">
      <pre tabIndex={0} aria-label={label} data-testid={testId}>
        <code>{text}</code>
      </pre>
      <button type="button" onClick={copy}>
        {done === "copied" ? "Copied" : done === "select" ? "Select and copy" : "Copy"}
      </button>
    </div>
  );
}
