// A Web Worker of the basis-lab page: its own instance of the same WebAssembly, running one
// analysis (a sweep, a zoo, a hyperspectral grid) so the page keeps drawing. The page sends
// [kind, RON text of the task]; the worker answers "p<count>" as items finish, then
// "o<RON text of the result>" or "e<why it failed>" (src/web_worker.rs reads them).
import init, { runTask } from "./basis-lab.js";

const ready = init();

self.onmessage = async (event) => {
  const [kind, input] = event.data;
  try {
    await ready;
    self.postMessage("o" + runTask(kind, input));
  } catch (e) {
    // A Rust panic has already posted its message; this one is read only if it did not.
    self.postMessage("e" + (typeof e === "string" ? e : "the analysis stopped: " + e));
  }
};
