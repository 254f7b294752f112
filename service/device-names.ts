// The name a GPU reports (torch.cuda.get_device_name, nvidia-smi) -> the catalog id, for runs the
// harness wrote without --gpu. Only an unambiguous match is taken; otherwise the caller says which
// catalog GPUs it could be and asks for the id.
import type { GpuSpec } from '../predictor/types.js';
import { getGpu, loadGpus } from '../seeds/catalog.js';

const tokens = (s: string) =>
  s
    .toUpperCase()
    .replace(/\b(NVIDIA|TESLA|GEFORCE|AMD|INSTINCT)\b/g, ' ')
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
const isMemoryToken = (t: string) => /^\d+GB$/.test(t);

/** The catalog GPU a device name means, or the candidates when it is not clear. */
export function catalogGpuForDevice(
  name: string,
  memoryGb?: number,
): { gpu: GpuSpec } | { candidates: string[] } {
  const exact = getGpu(name) ?? loadGpus().find((g) => g.id.toUpperCase() === name.trim().toUpperCase());
  if (exact) return { gpu: exact };
  const have = new Set(tokens(name));
  // Every non-memory token of the catalog id appears in the name (A100-PCIE-80GB <- "NVIDIA A100 80GB PCIe").
  let candidates = loadGpus().filter((g) => {
    const want = tokens(g.id).filter((t) => !isMemoryToken(t));
    return want.length > 0 && want.every((t) => have.has(t));
  });
  // No full match ("NVIDIA H100 80GB HBM3"): the GPUs of the same chip name, told apart by memory below.
  if (!candidates.length)
    candidates = loadGpus().filter((g) => tokens(g.id)[0] !== undefined && have.has(tokens(g.id)[0]));
  // Keep the most specific ids (RTX-3080 and RTX-3080-Laptop-MaxQ both match a laptop's name).
  const most = Math.max(0, ...candidates.map((g) => tokens(g.id).filter((t) => !isMemoryToken(t)).length));
  candidates = candidates.filter((g) => tokens(g.id).filter((t) => !isMemoryToken(t)).length === most);
  const named = [...have].find(isMemoryToken);
  const memory = memoryGb ?? (named ? Number(named.replace('GB', '')) : undefined);
  if (memory !== undefined && candidates.length > 1) {
    // Vendors' "80 GB" is 80 GiB; a device reports a little less than its label.
    const nearest = Math.min(...candidates.map((g) => Math.abs(g.memoryGb - memory)));
    candidates = candidates.filter((g) => Math.abs(g.memoryGb - memory) === nearest);
  }
  return candidates.length === 1 ? { gpu: candidates[0] } : { candidates: candidates.map((g) => g.id) };
}
