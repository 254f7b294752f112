// A progress bar on stderr for long CLI work (evaluate, big predict-csv). It draws only on a
// terminal: piped or logged output stays free of carriage returns.

export interface Progress {
  /** `done` of `total` finished; `label` replaces the bar's label. */
  update(done: number, total?: number, label?: string): void;
  /** Completes the line (the bar stays, full). */
  finish(): void;
}

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

const WIDTH = 30;
const REDRAW_MS = 100;

export function progressBar(label: string, total: number, stream: ProgressStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => {}, finish: () => {} };
  let lastDraw = 0;
  let current = { done: 0, total, label };
  const draw = () => {
    const fraction = current.total > 0 ? Math.min(1, current.done / current.total) : 0;
    const filled = Math.round(fraction * WIDTH);
    const line = `${current.label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${Math.floor(
      fraction * 100,
    )
      .toString()
      .padStart(3)}% ${current.done}/${current.total}`;
    stream.write(`\r${line.slice(0, (stream.columns ?? 120) - 1)}\x1b[K`);
  };
  return {
    update(done, newTotal, newLabel) {
      current = { done, total: newTotal ?? current.total, label: newLabel ?? current.label };
      const now = Date.now();
      if (now - lastDraw >= REDRAW_MS || done >= current.total) {
        lastDraw = now;
        draw();
      }
    },
    finish() {
      current.done = current.total;
      draw();
      stream.write('\n');
    },
  };
}
