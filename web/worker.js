// A Web Worker of the basis-lab page: its own instance of the same WebAssembly, so the page
// keeps drawing while it computes (src/web_worker.rs is the page's side). It takes one job:
// ["task", kind, RON] runs an analysis (a sweep, a zoo, a hyperspectral grid) and answers
// "p<count>" as items finish, then "o<RON result>" or "e<why>"; ["live", kind, RON settings]
// drives a live run (the attention twins) that takes ["command", RON] messages and answers
// "u<RON update>" per update, "d" once it has ended, or "e<why>".
import init, { runTask, startLive } from "./basis-lab.js";

const ready = init();
// Commands that arrived and were not yet given to the live run, and the wake-up of its wait.
const commands = [];
let wake = null;

self.onmessage = async (event) => {
  const [job, kind, text] = event.data;
  if (job === "command") {
    commands.push(kind);
    if (wake) wake();
    return;
  }
  try {
    await ready;
    if (job === "task") {
      self.postMessage("o" + runTask(kind, text));
    } else if (job === "live") {
      await drive(startLive(kind, text));
    }
  } catch (e) {
    // A Rust panic has already posted its message; this one is read only if it did not.
    self.postMessage("e" + (typeof e === "string" ? e : "the run stopped: " + e));
  }
};

// The desktop thread's loop (live::thread_loop): commands first, else a slice of work while
// the run is busy; between slices the worker reads its messages, so a Pause gets in.
async function drive(run) {
  let next = run.begin();
  while (next !== "done") {
    if (commands.length === 0) {
      await new Promise((resolve) => {
        wake = resolve;
        if (next === "busy") setTimeout(resolve, 0);
        else if (next.startsWith("wait ")) setTimeout(resolve, Number(next.slice(5)));
      });
      wake = null;
    }
    next = commands.length > 0 ? run.command(commands.splice(0)) : run.work();
  }
  run.free();
  self.postMessage("d");
}
