// A Web Worker of the basis-lab page: its own instance of the same WebAssembly, so the page
// keeps drawing while it computes (src/web_worker.rs is the page's side). It takes one job:
// ["task", kind, RON] runs an analysis (a sweep, a zoo, a hyperspectral grid) and answers
// "p<count>" as items finish, then "o<RON result>"; ["live", kind, RON settings] drives a live
// run (the attention twins) that takes ["command", RON] messages and answers "u<RON update>"
// per update and "d" once it has ended. Either fails with "r<why>" (refused: an unknown kind,
// unreadable input) or "e<message>" (a panic, whose message Rust posts before it stops).
import init, { runTask, startLive } from "./basis-lab.js";

const ready = init();
// Commands that arrived and were not yet given to the live run, and the wake-up of its wait.
const commands = [];
let wake = null;
// A yield to the worker's message queue without a timer's 4 ms clamp.
const channel = new MessageChannel();
let resume = null;
channel.port1.onmessage = () => resume && resume();
const yieldToMessages = () => new Promise((r) => { resume = r; channel.port2.postMessage(0); });

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
    // A Rust `Err` arrives as its text; anything else follows a panic already reported.
    self.postMessage(typeof e === "string" ? "r" + e : "e" + "the run stopped: " + e);
  }
};

// The desktop thread's loop (live::thread_loop): commands first, else a slice of work while
// the run is busy; between slices the worker reads its messages, so a Pause gets in.
async function drive(run) {
  let next = run.begin();
  while (next !== "done") {
    if (commands.length === 0) {
      if (next === "busy") {
        await yieldToMessages();
      } else {
        await new Promise((resolve) => {
          wake = resolve;
          if (next.startsWith("wait ")) setTimeout(resolve, Number(next.slice(5)));
        });
        wake = null;
      }
    }
    next = commands.length > 0 ? run.command(commands.splice(0)) : run.work();
  }
  run.free();
  self.postMessage("d");
}
